//! `strata lsp`: the language server of a strata project, over standard input and output.
//!
//! It speaks the Language Server Protocol with incremental document sync. Each open
//! document is written, as it is typed, into a private copy of the project
//! ([`mirror`]), and the project's check runs over that copy on a thread of its own
//! ([`checker`]), so the diagnostics are `strata check`'s: the same codes, messages, spans
//! and help, the check's JSON form as each diagnostic's data.

pub mod actions;
pub mod checker;
pub mod completion;
pub mod diagnostics;
pub mod flow;
pub mod knowledge;
pub mod mirror;
pub mod navigate;
pub mod placeholders;
pub mod prompt_keys;
mod requests;
pub mod server;
pub mod settings;
pub mod text;
pub mod uri;

use std::path::PathBuf;
use std::process::ExitCode;

use lsp_server::Connection;
use lsp_types::{
    CodeActionProviderCapability, CompletionOptions, DiagnosticOptions,
    DiagnosticServerCapabilities, HoverProviderCapability, InitializeParams, OneOf,
    SemanticTokensFullOptions, SemanticTokensOptions, SemanticTokensServerCapabilities,
    ServerCapabilities, TextDocumentSyncCapability, TextDocumentSyncKind,
};

/// What the server offers the editor.
pub fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Kind(
            TextDocumentSyncKind::INCREMENTAL,
        )),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec!["{".into(), "$".into(), ":".into(), ".".into()]),
            ..CompletionOptions::default()
        }),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        inlay_hint_provider: Some(OneOf::Left(true)),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        rename_provider: Some(OneOf::Left(true)),
        code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
        semantic_tokens_provider: Some(SemanticTokensServerCapabilities::SemanticTokensOptions(
            SemanticTokensOptions {
                legend: actions::legend(),
                full: Some(SemanticTokensFullOptions::Bool(true)),
                ..SemanticTokensOptions::default()
            },
        )),
        diagnostic_provider: Some(DiagnosticServerCapabilities::Options(DiagnosticOptions {
            identifier: Some(diagnostics::SOURCE.to_string()),
            inter_file_dependencies: true,
            workspace_diagnostics: true,
            ..DiagnosticOptions::default()
        })),
        ..ServerCapabilities::default()
    }
}

/// The project of the editor's workspace: the nearest ancestor holding `tools/` of its first
/// folder (or of its root, or of the current directory).
fn project_root(params: &InitializeParams) -> Option<PathBuf> {
    #[allow(deprecated)]
    let given = params
        .workspace_folders
        .as_ref()
        .and_then(|f| f.first())
        .map(|f| f.uri.clone())
        .or_else(|| params.root_uri.clone())
        .and_then(|u| uri::to_path(&u));
    let start = given.or_else(|| std::env::current_dir().ok())?;
    strata_app::Project::find_root(&start)
}

/// Serves one editor over `connection` until it shuts the server down.
pub fn serve(connection: &Connection) -> Result<(), String> {
    let caps = serde_json::to_value(capabilities()).map_err(|e| e.to_string())?;
    let params = connection.initialize(caps).map_err(|e| e.to_string())?;
    let params: InitializeParams = serde_json::from_value(params).map_err(|e| e.to_string())?;
    let settings = settings::Settings::default().with(params.initialization_options.as_ref());
    server::serve(connection, project_root(&params), settings)
}

/// Runs the server on standard input and output; its exit code.
pub fn main() -> ExitCode {
    let (connection, threads) = Connection::stdio();
    let served = serve(&connection);
    drop(connection);
    let joined = threads.join().map_err(|e| e.to_string());
    match served.and(joined) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("strata lsp: {e}");
            ExitCode::FAILURE
        }
    }
}
