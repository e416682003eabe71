//! The requests the server answers, each by the module that knows it.

use lsp_server::{ErrorCode, Request, RequestId, Response};
use lsp_types::request::{
    CodeActionRequest, Completion, DocumentDiagnosticRequest, GotoDefinition, HoverRequest,
    InlayHintRequest, References, Rename, Request as _, SemanticTokensFullRequest,
    WorkspaceDiagnosticRequest,
};
use lsp_types::{
    CodeActionParams, CompletionItem, CompletionParams, CompletionResponse,
    DocumentDiagnosticParams, InlayHintParams, ReferenceParams, RenameParams, SemanticTokens,
    SemanticTokensParams, TextDocumentPositionParams,
};
use serde_json::Value;

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
        HoverRequest::METHOD
        | InlayHintRequest::METHOD
        | GotoDefinition::METHOD
        | References::METHOD
        | Rename::METHOD => {
            let Some(ws) = server.workspace.as_ref() else {
                return refused(id, ErrorCode::RequestFailed, no_project());
            };
            Some(match navigate(server, ws, &method, params) {
                Ok(value) => Response::new_ok(id, value),
                Err(reason) => Response::new_err(id, ErrorCode::RequestFailed as i32, reason),
            })
        }
        CodeActionRequest::METHOD | SemanticTokensFullRequest::METHOD => {
            Some(match edit_help(server, &method, params) {
                Ok(value) => Response::new_ok(id, value),
                Err(reason) => Response::new_err(id, ErrorCode::InvalidParams as i32, reason),
            })
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
fn pull(ws: &Workspace, id: RequestId, method: &str, params: Value) -> Option<Response> {
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
        at.position.line as usize + 1,
    ))
}

/// Answers a request about the placeholder at a position (or, for inlay hints, in a range).
fn navigate(server: &Server, ws: &Workspace, method: &str, params: Value) -> Result<Value, String> {
    let project = ws.project().map_err(|e| e.message().to_string())?;
    let source = ws.mirror.source();
    let invalid = |e: serde_json::Error| e.to_string();
    let outside = || "the document is not a file of the project".to_string();
    let spot_at = |at: &TextDocumentPositionParams| {
        let relative = ws.relative(&at.text_document.uri)?;
        let text = server.text(&at.text_document.uri)?;
        crate::navigate::spot(relative, text, at.position)
    };
    let flow_at = |at: &TextDocumentPositionParams| {
        let relative = ws.relative(&at.text_document.uri)?;
        Some((relative, server.text(&at.text_document.uri)?))
    };
    let text_of = |file: &std::path::Path| {
        let uri = crate::uri::from_path(&source.join(file))?;
        server.text(&uri)
    };
    let json = |v: Result<Value, serde_json::Error>| v.map_err(|e| e.to_string());
    match method {
        InlayHintRequest::METHOD if !server.settings.inlay_hints => Ok(Value::Array(Vec::new())),
        InlayHintRequest::METHOD => {
            let p: InlayHintParams = serde_json::from_value(params).map_err(invalid)?;
            let relative = ws.relative(&p.text_document.uri).ok_or_else(outside)?;
            let text = server.text(&p.text_document.uri).ok_or_else(outside)?;
            json(serde_json::to_value(crate::navigate::inlay_hints(
                &project, &relative, &text, p.range,
            )))
        }
        HoverRequest::METHOD => {
            let p: TextDocumentPositionParams = serde_json::from_value(params).map_err(invalid)?;
            let found = flow_at(&p)
                .and_then(|(r, t)| crate::flow::hover(&project, &r, &t, p.position))
                .or_else(|| spot_at(&p).and_then(|s| crate::navigate::hover(&project, &s)));
            json(serde_json::to_value(found))
        }
        GotoDefinition::METHOD => {
            let p: TextDocumentPositionParams = serde_json::from_value(params).map_err(invalid)?;
            let found = flow_at(&p)
                .and_then(|(r, t)| crate::flow::definition(&project, source, &r, &t, p.position))
                .or_else(|| {
                    spot_at(&p).and_then(|s| crate::navigate::definition(&project, source, &s))
                });
            json(serde_json::to_value(found))
        }
        References::METHOD => {
            let p: ReferenceParams = serde_json::from_value(params).map_err(invalid)?;
            let at = &p.text_document_position;
            let declared = p.context.include_declaration;
            let flow = flow_at(at).and_then(|(r, t)| {
                let uri = &at.text_document.uri;
                crate::prompt_keys::references(
                    &project,
                    source,
                    &r,
                    &t,
                    at.position,
                    declared,
                    &text_of,
                )
                .or_else(|| crate::flow::references(&project, uri, &r, &t, at.position, declared))
            });
            if let Some(found) = flow {
                return json(serde_json::to_value(found));
            }
            let found = spot_at(&p.text_document_position).map(|s| {
                let mut all = crate::navigate::references(&project, source, &s, &text_of);
                if p.context.include_declaration {
                    all.extend(crate::navigate::definition(&project, source, &s));
                }
                all
            });
            json(serde_json::to_value(found))
        }
        _ => {
            let p: RenameParams = serde_json::from_value(params).map_err(invalid)?;
            let at = &p.text_document_position;
            let flow = flow_at(at).and_then(|(r, t)| {
                let uri = &at.text_document.uri;
                let new = &p.new_name;
                crate::prompt_keys::rename(&project, source, &r, &t, at.position, new, &text_of)
                    .or_else(|| crate::flow::rename(&project, uri, &r, &t, at.position, new))
            });
            if let Some(edit) = flow {
                return json(serde_json::to_value(edit?));
            }
            let s =
                spot_at(at).ok_or_else(|| "there is no placeholder here to rename".to_string())?;
            let edit = crate::navigate::rename(&project, &at.text_document.uri, &s, &p.new_name)?;
            json(serde_json::to_value(edit))
        }
    }
}

/// Answers a request for the fixes of a range or the semantic tokens of a document.
fn edit_help(server: &Server, method: &str, params: Value) -> Result<Value, String> {
    let invalid = |e: serde_json::Error| e.to_string();
    let unknown = || "the document is not open".to_string();
    let json = |v: Result<Value, serde_json::Error>| v.map_err(|e| e.to_string());
    if method == CodeActionRequest::METHOD {
        let p: CodeActionParams = serde_json::from_value(params).map_err(invalid)?;
        let text = server.text(&p.text_document.uri).ok_or_else(unknown)?;
        let fixes = crate::actions::fixes(&p.text_document.uri, &text, &p.context.diagnostics);
        return json(serde_json::to_value(fixes));
    }
    let p: SemanticTokensParams = serde_json::from_value(params).map_err(invalid)?;
    let text = server.text(&p.text_document.uri).ok_or_else(unknown)?;
    let relative = server
        .workspace
        .as_ref()
        .and_then(|ws| ws.relative(&p.text_document.uri))
        .unwrap_or_default();
    let data = crate::actions::tokens(&relative, &text);
    json(serde_json::to_value(SemanticTokens {
        result_id: None,
        data,
    }))
}
