//! The requests the server answers, each by the module that knows it.

use lsp_server::{ErrorCode, Request, RequestId, Response};
use lsp_types::request::{
    Completion, DocumentDiagnosticRequest, Request as _, WorkspaceDiagnosticRequest,
};
use lsp_types::{
    CompletionItem, CompletionParams, CompletionResponse, DocumentDiagnosticParams,
    TextDocumentPositionParams,
};

use crate::server::{Server, Workspace};

/// The answer to `req`, or `None` when the checking thread answers it later; a method the
/// server does not know is refused as the protocol says.
pub fn answer(server: &mut Server, req: Request) -> Option<Response> {
    let Request { id, method, params } = req;
    let refused = |id: RequestId, code: ErrorCode, message: String| {
        Some(Response::new_err(id, code as i32, message))
    };
    match method.as_str() {
        WorkspaceDiagnosticRequest::METHOD | DocumentDiagnosticRequest::METHOD => {
            let Some(ws) = server.workspace.as_ref() else {
                return refused(id, ErrorCode::RequestFailed, no_project());
            };
            pull(ws, id, &method, params)
        }
        Completion::METHOD => {
            let Some(ws) = server.workspace.as_ref() else {
                return refused(id, ErrorCode::RequestFailed, no_project());
            };
            let items = serde_json::from_value::<CompletionParams>(params)
                .ok()
                .and_then(|p| complete(server, ws, &p.text_document_position))
                .unwrap_or_default();
            Some(Response::new_ok(id, CompletionResponse::Array(items)))
        }
        _ => refused(
            id,
            ErrorCode::MethodNotFound,
            format!("unknown method `{method}`"),
        ),
    }
}

/// Why a request that needs the project cannot be answered.
fn no_project() -> String {
    "no strata project (a directory holding tools/) around the workspace".to_string()
}

/// Hands a pull of diagnostics to the checking thread.
fn pull(
    ws: &Workspace,
    id: RequestId,
    method: &str,
    params: serde_json::Value,
) -> Option<Response> {
    if method == WorkspaceDiagnosticRequest::METHOD {
        ws.checker().pull_workspace(id);
        return None;
    }
    let file = serde_json::from_value::<DocumentDiagnosticParams>(params)
        .ok()
        .and_then(|p| ws.relative(&p.text_document.uri));
    match file {
        Some(file) => {
            ws.checker()
                .pull_document(id, file.to_string_lossy().into_owned());
            None
        }
        None => Some(Response::new_err(
            id,
            ErrorCode::InvalidParams as i32,
            "the document is not a file of the project".to_string(),
        )),
    }
}

/// The names to offer at a position of an open document.
fn complete(
    server: &Server,
    ws: &Workspace,
    at: &TextDocumentPositionParams,
) -> Option<Vec<CompletionItem>> {
    let relative = ws.relative(&at.text_document.uri)?;
    let text = server.text(&at.text_document.uri)?;
    let offset = crate::text::offset(&text, at.position);
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let project = ws.project().ok()?;
    Some(crate::completion::complete(
        &project,
        &relative,
        &text,
        &text[line_start..offset],
    ))
}
