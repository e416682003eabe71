//! The MCP server: one [`Shared`] state (the project, its catalog, what changed) behind every
//! session, and [`Strata`], the handler of each session's requests.

use std::sync::{Arc, Mutex, RwLock};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    ContentBlock, GetPromptRequestParams, GetPromptResponse, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ProgressToken, ReadResourceRequestParams, ReadResourceResponse,
    ServerConfig, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, Peer, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use strata_app::{App, Cancel};
use strata_core::Error;

use crate::call::{self, Answer, Call};
use crate::catalog::Catalog;
use crate::progress::{Note, Notes};
use crate::select::Select;
use crate::Serving;

/// What every session of one server shares.
pub(crate) struct Shared {
    /// The project.
    pub(crate) app: App,
    /// How calls run.
    pub(crate) serving: Serving,
    /// What the user exposes.
    select: Select,
    catalog: RwLock<Arc<Catalog>>,
    /// Bumped each time the project's items changed.
    pub(crate) changed: tokio::sync::watch::Sender<u64>,
    /// Sessions of protocol revisions before 2026-07-28, told of changes directly.
    peers: Mutex<Vec<Peer<RoleServer>>>,
}

impl Shared {
    /// The state of a server of `app`, its catalog read.
    pub(crate) fn new(app: App, serving: Serving, select: Select) -> Arc<Shared> {
        let catalog = Catalog::build(&app, &select);
        report_notes(&catalog);
        Arc::new(Shared {
            app,
            serving,
            select,
            catalog: RwLock::new(Arc::new(catalog)),
            changed: tokio::sync::watch::channel(0).0,
            peers: Mutex::new(Vec::new()),
        })
    }

    /// The catalog as it is now.
    pub(crate) fn catalog(&self) -> Arc<Catalog> {
        self.catalog
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Reads the catalog again and tells every session the lists changed.
    pub(crate) fn reload(&self) {
        let catalog = Catalog::build(&self.app, &self.select);
        report_notes(&catalog);
        *self.catalog.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(catalog);
        self.changed.send_modify(|n| *n += 1);
    }

    /// The sessions of older revisions, to tell of a change.
    pub(crate) fn peers(&self) -> Vec<Peer<RoleServer>> {
        self.peers.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Forgets the sessions that could not be told.
    pub(crate) fn forget(&self, gone: &[usize]) {
        let mut peers = self.peers.lock().unwrap_or_else(|e| e.into_inner());
        let mut i = 0;
        peers.retain(|_| {
            i += 1;
            !gone.contains(&(i - 1))
        });
    }
}

/// Items left out, on standard error (never the protocol's stdout).
fn report_notes(catalog: &Catalog) {
    for note in &catalog.notes {
        eprintln!("strata mcp: {note}");
    }
}

/// The handler of one session.
#[derive(Clone)]
pub(crate) struct Strata(pub(crate) Arc<Shared>);

/// Serves one session on standard input and output, until the client closes it.
pub(crate) async fn serve_stdio(shared: Arc<Shared>) -> Result<(), Error> {
    let running = Strata(shared)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| transport_error(&e))?;
    running.waiting().await.map_err(|e| transport_error(&e))?;
    Ok(())
}

fn transport_error(e: &dyn std::fmt::Display) -> Error {
    crate::request_error(
        strata_core::ErrorKind::Io,
        format!("the MCP session failed: {e}"),
        "the client must speak MCP (JSON-RPC) on standard input and output",
    )
}

/// A value of an rmcp type from its JSON form.
fn typed<T: DeserializeOwned>(value: Value) -> Result<T, McpError> {
    serde_json::from_value(value).map_err(|e| McpError::internal_error(e.to_string(), None))
}

/// A result of an rmcp type from its JSON form, marked complete (`resultType`, which the
/// 2026-07-28 revision requires and rmcp drops for older ones).
fn result<T: DeserializeOwned>(mut value: Value) -> Result<T, McpError> {
    value["resultType"] = json!("complete");
    typed(value)
}

/// A protocol error carrying strata's error in its `--json` shape.
fn invalid(e: &Error) -> McpError {
    McpError::invalid_params(e.message().to_string(), Some(strata_app::error_json(e)))
}

/// Sends `note` as the progress after `done`; the progress it reached.
async fn notify(peer: &Peer<RoleServer>, token: &ProgressToken, done: f64, note: &Note) -> f64 {
    let param =
        ProgressNotificationParam::new(token.clone(), done + 1.0).with_message(note.message());
    // A client gone is the run's business, not the note's: the call still ends.
    let _ = peer.notify_progress(param).await;
    done + 1.0
}

fn result_of(answer: Answer) -> CallToolResult {
    let content = vec![ContentBlock::text(answer.text)];
    let mut result = if answer.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    result.structured_content = answer.structured;
    result
}

impl ServerHandler for Strata {
    fn get_info(&self) -> ServerConfig {
        let mut info: ServerConfig = ServerConfig::new(
            typed(json!({
                "tools": {"listChanged": true},
                "prompts": {"listChanged": true},
                "resources": {"listChanged": true},
                "completions": {},
            }))
            .unwrap_or_default(),
        )
        .with_instructions(
            "A strata project. Each tool runs one of its tools, graphs, directives or plans \
             (through strata's checks: what `strata check` rejects is refused). `run_plan` runs \
             a plan you write. Prompts render its prompt templates; resources are its run \
             records and source files.",
        );
        info.server_info = typed(json!({
            "name": "strata",
            "title": "strata",
            "version": env!("CARGO_PKG_VERSION"),
        }))
        .unwrap_or(info.server_info);
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let catalog = self.0.catalog();
        let tools: Vec<Value> = catalog.items().iter().map(|i| i.to_tool()).collect();
        result(json!({ "tools": tools }))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let catalog = self.0.catalog();
        let Some(item) = catalog.get(&request.name).cloned() else {
            return Err(McpError::invalid_params(
                format!("unknown tool `{}`", strata_core::shown(&request.name)),
                None,
            ));
        };
        let cancel = Cancel::new().map_err(|e| McpError::internal_error(e.to_string(), None))?;
        let token = context.meta.get_progress_token();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let notes = Notes(token.is_some().then_some(tx));
        let shared = self.0.clone();
        let args = request.arguments.unwrap_or_default();
        let stop = cancel.clone();
        let mut job = tokio::task::spawn_blocking(move || {
            let call = Call {
                item: item.as_ref(),
                args,
                cancel: stop,
                notes,
            };
            call::run(&shared.app, &shared.serving, call)
        });
        let mut progress = 0.0;
        let mut open = true;
        let answer = loop {
            tokio::select! {
                done = &mut job => {
                    break done.map_err(|e| McpError::internal_error(e.to_string(), None))?;
                }
                () = context.ct.cancelled(), if !cancel.is_cancelled() => cancel.cancel(),
                note = rx.recv(), if open => match (note, &token) {
                    (Some(note), Some(token)) => {
                        progress = notify(&context.peer, token, progress, &note).await;
                    }
                    _ => open = false,
                },
            }
        };
        // Notes sent as the run ended go out before its result.
        while let (Ok(note), Some(token)) = (rx.try_recv(), &token) {
            progress = notify(&context.peer, token, progress, &note).await;
        }
        Ok(CallToolResponse::Complete(result_of(answer)))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let prompts = crate::prompts::list(&self.0.app).map_err(|e| invalid(&e))?;
        result(json!({ "prompts": prompts }))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let arguments = request.arguments.unwrap_or_default();
        let rendered = crate::prompts::get(
            &self.0.app,
            &request.name,
            &arguments,
            self.0.serving.strict,
        )
        .map_err(|e| invalid(&e))?;
        match rendered {
            Some(prompt) => Ok(GetPromptResponse::from(result::<
                rmcp::model::GetPromptResult,
            >(prompt)?)),
            None => Err(McpError::invalid_params(
                format!("unknown prompt `{}`", strata_core::shown(&request.name)),
                None,
            )),
        }
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let resources = crate::resources::list(&self.0.app, &self.0.catalog());
        result(json!({ "resources": resources }))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        result(json!({ "resourceTemplates": crate::resources::templates() }))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        match crate::resources::read(&self.0.app, &self.0.catalog(), &request.uri) {
            Ok(contents) => Ok(ReadResourceResponse::from(result::<
                rmcp::model::ReadResourceResult,
            >(contents)?)),
            Err(e) => Err(McpError::resource_not_found(
                e.message().to_string(),
                Some(strata_app::error_json(&e)),
            )),
        }
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let values =
            crate::complete::values(&self.0, &request.argument.name, &request.argument.value);
        result(crate::complete::result(values))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.0
            .peers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(context.peer);
    }

    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(
            SubscriptionFilter::builder()
                .tools_list_changed()
                .prompts_list_changed()
                .resources_list_changed()
                .build(),
        )
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let mut changed = self.0.changed.subscribe();
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                news = changed.changed() => {
                    if news.is_err() {
                        return Ok(());
                    }
                    let sink = context.sink();
                    let _ = sink.notify_tool_list_changed().await;
                    let _ = sink.notify_prompt_list_changed().await;
                    let _ = sink.notify_resource_list_changed().await;
                }
            }
        }
    }
}
