//! The HTTP server: bound to 127.0.0.1, every request's `Host` checked against the address
//! it serves (a page of another site that a DNS name rebound to 127.0.0.1 is refused), only
//! `GET`, and these routes:
//!
//! * `/`, `/app.js`, `/app.css`: the page, built into the binary;
//! * `/api/runs?status=…&target=…`: the runs' summaries;
//! * `/api/runs/<id>`: a run's summary and its definition laid out;
//! * `/api/runs/<id>/events`: its events, as server-sent events (on a thread of its own),
//!   their heavy fields left out;
//! * `/api/runs/<id>/event?at=<offset>`: one whole event, for a step shown in detail.
//!
//! Every JSON body is redacted of the project's secret values before it is sent.

use std::net::SocketAddr;
use std::sync::Arc;

use serde_json::{json, Value};
use strata_app::App;
use strata_core::{Error, ErrorKind};
use strata_runs::RunStore;
use tiny_http::{Header, Method, Request, Response, Server};

use crate::runs;

const PAGE: &str = include_str!("page/index.html");
const SCRIPT: &str = include_str!("page/app.js");
const STYLE: &str = include_str!("page/app.css");

/// The content security policy of every response: nothing but this server's own files.
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// A running viewer.
pub struct Viewer {
    server: Server,
    addr: SocketAddr,
    app: App,
    store: RunStore,
    secrets: Arc<Vec<String>>,
}

impl Viewer {
    /// Binds 127.0.0.1 on `port` (a free one when `None`) for the project of `app`.
    pub fn bind(app: App, port: Option<u16>) -> Result<Viewer, Error> {
        let server = Server::http(("127.0.0.1", port.unwrap_or(0))).map_err(|e| {
            Error::new(
                strata_core::Layer::REQUEST,
                ErrorKind::Io,
                format!("cannot listen on 127.0.0.1: {e}"),
            )
            .with_hint("pick another --port, or leave it out for a free one")
        })?;
        let addr = server
            .server_addr()
            .to_ip()
            .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 0)));
        let tools = app.project().tool_ids();
        let tools: Vec<&str> = tools.iter().map(String::as_str).collect();
        let secrets = strata_app::secrets::secret_values(Some(app.project()), &tools, &[]);
        let store = RunStore::new(&app.root);
        Ok(Viewer {
            server,
            addr,
            app,
            store,
            secrets: Arc::new(secrets),
        })
    }

    /// The address it serves: `http://127.0.0.1:<port>/`.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Serves requests until the process ends.
    pub fn serve(&self) {
        for request in self.server.incoming_requests() {
            self.handle(request);
        }
    }

    fn handle(&self, request: Request) {
        if !self.host_allowed(&request) {
            return reply(request, 403, "text/plain", "forbidden host\n".into());
        }
        if *request.method() != Method::Get {
            return reply(request, 405, "text/plain", "only GET\n".into());
        }
        let url = request.url().to_string();
        let (path, query) = url.split_once('?').unwrap_or((&url, ""));
        let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        match parts.as_slice() {
            [""] => reply(request, 200, "text/html; charset=utf-8", PAGE.into()),
            ["app.js"] => reply(
                request,
                200,
                "text/javascript; charset=utf-8",
                SCRIPT.into(),
            ),
            ["app.css"] => reply(request, 200, "text/css; charset=utf-8", STYLE.into()),
            ["favicon.ico"] => reply(request, 204, "text/plain", String::new()),
            ["api", "runs"] => {
                let status = param(query, "status");
                let target = param(query, "target");
                let list = runs::list(&self.store, status.as_deref(), target.as_deref());
                self.json(request, 200, json!({"runs": list}));
            }
            ["api", "runs", id] => match runs::page(&self.app, &self.store, id) {
                Ok(page) => self.json(request, 200, page),
                Err(e) => self.error(request, &e),
            },
            ["api", "runs", id, "events"] => self.events(request, id, query),
            ["api", "runs", id, "event"] => {
                let at = param(query, "at").and_then(|a| a.parse::<u64>().ok());
                match self.event_at(id, at) {
                    Ok(event) => self.json(request, 200, event),
                    Err(e) => self.error(request, &e),
                }
            }
            _ => reply(request, 404, "text/plain", "not found\n".into()),
        }
    }

    /// True when the request's `Host` is this server's address (by number or as
    /// `localhost`).
    fn host_allowed(&self, request: &Request) -> bool {
        let port = self.addr.port();
        request
            .headers()
            .iter()
            .find(|h| h.field.equiv("Host"))
            .is_some_and(|h| {
                let host = h.value.as_str();
                host == format!("127.0.0.1:{port}") || host == format!("localhost:{port}")
            })
    }

    fn json(&self, request: Request, status: u16, mut body: Value) {
        strata_app::redact_secrets(&mut body, &self.secrets);
        reply(request, status, "application/json", body.to_string());
    }

    fn error(&self, request: Request, e: &Error) {
        let status = match e.kind() {
            ErrorKind::UnknownName => 404,
            ErrorKind::Invalid => 400,
            _ => 500,
        };
        self.json(
            request,
            status,
            json!({"error": e.message(), "hint": e.hint()}),
        );
    }

    /// The whole event of run `id` whose line starts at byte `at` of its log.
    fn event_at(&self, id: &str, at: Option<u64>) -> Result<Value, Error> {
        let dir = self.store.open(id)?;
        let event = match at {
            Some(at) => dir.read_event_at(at)?,
            None => None,
        };
        event.ok_or_else(|| {
            Error::new(
                strata_core::Layer::REQUEST,
                ErrorKind::Invalid,
                format!("run `{id}` has no event at that offset"),
            )
            .with_hint("the offsets are the `at` of the streamed events")
        })
    }

    /// Streams run `id`'s events on a thread of its own, from `Last-Event-ID` or `from`.
    fn events(&self, request: Request, id: &str, query: &str) {
        let dir = match self.store.open(id) {
            Ok(dir) => dir,
            Err(e) => return self.error(request, &e),
        };
        let last = request
            .headers()
            .iter()
            .find(|h| h.field.equiv("Last-Event-ID"))
            .map(|h| h.value.as_str().to_string())
            .or_else(|| param(query, "from"));
        let from = last.and_then(|v| v.trim().parse::<u64>().ok()).unwrap_or(0);
        let secrets = Arc::clone(&self.secrets);
        let spawned = std::thread::Builder::new()
            .name("strata-view-events".into())
            .spawn(move || {
                let mut out = request.into_writer();
                crate::stream::tail(&mut out, &dir, from, &secrets);
            });
        if spawned.is_err() {
            eprintln!("strata view: cannot start a thread for a stream of events");
        }
    }
}

/// Sends `body` with `status`, its content type and the headers every response has.
fn reply(request: Request, status: u16, content_type: &str, body: String) {
    let mut response = Response::from_string(body).with_status_code(status);
    for (name, value) in [
        ("Content-Type", content_type),
        ("Cache-Control", "no-store"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("Content-Security-Policy", POLICY),
    ] {
        if let Ok(header) = Header::from_bytes(name.as_bytes(), value.as_bytes()) {
            response.add_header(header);
        }
    }
    let _ = request.respond(response);
}

/// The value of `name` in a query string, percent-decoded.
fn param(query: &str, name: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (k == name).then(|| {
            percent_encoding::percent_decode_str(&v.replace('+', " "))
                .decode_utf8_lossy()
                .into_owned()
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_are_decoded() {
        assert_eq!(
            param("status=failed&target=plans%2Fa+b", "target").as_deref(),
            Some("plans/a b")
        );
        assert_eq!(param("status=failed", "target"), None);
        assert_eq!(param("status", "status").as_deref(), Some(""));
    }
}
