//! The requests the server answers, each by the module that knows it.

use lsp_server::{ErrorCode, Request, RequestId, Response};
use lsp_types::request::{DocumentDiagnosticRequest, Request as _, WorkspaceDiagnosticRequest};
use lsp_types::DocumentDiagnosticParams;

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
