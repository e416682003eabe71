//! Streamable HTTP: the MCP endpoint at `/mcp`, bound to loopback unless told otherwise.
//! rmcp's service checks `Host` (DNS rebinding) and `Origin` (a browser page of another
//! origin is refused with 403, as the specification requires); a bearer token, when given,
//! must come with every request (401 otherwise), and an address that is not loopback needs
//! one.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use strata_core::{Error, ErrorKind};
use subtle::ConstantTimeEq;

use crate::server::{Shared, Strata};

/// Where `--http` without an address serves.
pub(crate) const DEFAULT_ADDR: &str = "127.0.0.1:8765";

/// The path of the MCP endpoint.
const ENDPOINT: &str = "/mcp";

/// The token in `path` (its first line, trimmed), which must not be empty.
pub(crate) fn read_token(path: &Path) -> Result<String, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io("read", path, e))?;
    let token = text.lines().next().unwrap_or("").trim().to_string();
    if token.is_empty() {
        return Err(crate::request_error(
            ErrorKind::Invalid,
            format!("the token file `{}` is empty", path.display()),
            "put the token on its first line",
        ));
    }
    Ok(token)
}

/// Serves `shared` at `addr` until the process is stopped.
pub(crate) async fn serve(
    shared: Arc<Shared>,
    addr: &str,
    token: Option<String>,
) -> Result<(), Error> {
    let bad = |why: String| {
        crate::request_error(
            ErrorKind::Invalid,
            format!("--http `{}`: {why}", strata_core::shown(addr)),
            "an address and port such as 127.0.0.1:8765 (port 0 picks a free one)",
        )
    };
    let addr: SocketAddr = addr.parse().map_err(|e| bad(format!("{e}")))?;
    if !addr.ip().is_loopback() && token.is_none() {
        return Err(crate::request_error(
            ErrorKind::Forbidden,
            format!(
                "--http `{addr}` is not loopback: anyone who reaches it could run the project's tools"
            ),
            "give --token-file FILE (clients then send `Authorization: Bearer <token>`), or serve 127.0.0.1",
        ));
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| bad(format!("cannot listen: {e}")))?;
    let local = listener
        .local_addr()
        .map_err(|e| bad(format!("cannot listen: {e}")))?;
    let ip = match local.ip() {
        std::net::IpAddr::V6(ip) => format!("[{ip}]"),
        std::net::IpAddr::V4(ip) => ip.to_string(),
    };
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts([
            "localhost".to_string(),
            "127.0.0.1".to_string(),
            "::1".to_string(),
            "[::1]".to_string(),
            ip.clone(),
            format!("{ip}:{}", local.port()),
        ])
        .with_allowed_origins([
            "http://localhost:*".to_string(),
            "http://127.0.0.1:*".to_string(),
            "http://[::1]:*".to_string(),
            format!("http://{ip}:{}", local.port()),
        ])
        .enforce_origin_validation();
    let factory = shared.clone();
    let service = StreamableHttpService::new(
        move || Ok(Strata(factory.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    eprintln!(
        "strata mcp: serving {} at http://{ip}:{}{ENDPOINT}",
        shared.app.root.display(),
        local.port()
    );
    let token: Option<Arc<str>> = token.map(Arc::from);
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let service = service.clone();
        let token = token.clone();
        tokio::spawn(async move {
            let handler = hyper::service::service_fn(move |request: Request<Incoming>| {
                let service = service.clone();
                let token = token.clone();
                async move {
                    if request.uri().path() != ENDPOINT {
                        return Ok::<_, Infallible>(plain(
                            StatusCode::NOT_FOUND,
                            "not found: the MCP endpoint is /mcp",
                        ));
                    }
                    if !authorized(&request, token.as_deref()) {
                        return Ok(plain(
                            StatusCode::UNAUTHORIZED,
                            "a bearer token is required",
                        ));
                    }
                    Ok(service.handle(request).await)
                }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), handler)
                .await;
        });
    }
}

/// Whether `request` carries `token` (any request, when there is none).
fn authorized<B>(request: &Request<B>, token: Option<&str>) -> bool {
    let Some(token) = token else {
        return true;
    };
    let given = request
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    given.is_some_and(|g| bool::from(g.as_bytes().ct_eq(token.as_bytes())))
}

fn plain(status: StatusCode, text: &'static str) -> Response<BoxBody<Bytes, Infallible>> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *response.status_mut() = status;
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            hyper::header::WWW_AUTHENTICATE,
            hyper::header::HeaderValue::from_static("Bearer"),
        );
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(auth: Option<&str>) -> Request<()> {
        let mut builder = Request::builder().uri("/mcp");
        if let Some(a) = auth {
            builder = builder.header("authorization", a);
        }
        builder.body(()).unwrap()
    }

    #[test]
    fn a_token_must_come_whole_as_a_bearer() {
        assert!(authorized(&request(None), None));
        assert!(authorized(&request(Some("Bearer s3cret")), Some("s3cret")));
        assert!(!authorized(&request(Some("Bearer s3cre")), Some("s3cret")));
        assert!(!authorized(&request(Some("s3cret")), Some("s3cret")));
        assert!(!authorized(&request(None), Some("s3cret")));
    }
}
