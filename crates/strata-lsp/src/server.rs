//! The server's loop: the open documents, kept in step with the editor by incremental sync
//! and written into the project's copy, and the requests answered from them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use lsp_server::{Connection, Message, Notification, Request, Response};
use lsp_types::notification::{
    DidChangeConfiguration, DidChangeTextDocument, DidChangeWatchedFiles, DidCloseTextDocument,
    DidOpenTextDocument, Notification as _,
};
use lsp_types::{
    DidChangeConfigurationParams, DidChangeTextDocumentParams, DidChangeWatchedFilesParams,
    DidCloseTextDocumentParams, DidOpenTextDocumentParams, Uri,
};

use crate::checker::Checker;
use crate::mirror::Mirror;
use crate::settings::Settings;
use crate::text;
use crate::uri::to_path;

/// The project being edited: its copy and the thread checking it.
#[derive(Debug)]
pub struct Workspace {
    /// The copy the check reads.
    pub mirror: Mirror,
    checker: Checker,
}

impl Workspace {
    /// Copies the project at `root` and starts checking it.
    pub fn open(root: &Path, connection: &Connection) -> std::io::Result<Workspace> {
        let mirror = Mirror::of(root)?;
        let checker = Checker::start(
            mirror.root().to_path_buf(),
            root.to_path_buf(),
            connection.sender.clone(),
        )?;
        checker.request(Vec::new());
        Ok(Workspace { mirror, checker })
    }

    /// The thread checking the project.
    pub fn checker(&self) -> &Checker {
        &self.checker
    }

    /// The project as the editor has it (the copy, open documents written in).
    pub fn project(&self) -> Result<strata_app::Project, strata_core::Error> {
        strata_app::Project::at(self.mirror.root())
    }

    /// The path of `uri` relative to the project, when it lies inside it.
    pub fn relative(&self, uri: &Uri) -> Option<PathBuf> {
        let path = to_path(uri)?;
        path.strip_prefix(self.mirror.source())
            .ok()
            .map(Path::to_path_buf)
    }
}

/// The state of the server.
#[derive(Debug)]
pub struct Server {
    /// The open documents' text, by URI.
    pub documents: HashMap<String, String>,
    /// The project, when the editor opened one.
    pub workspace: Option<Workspace>,
    /// What the editor has switched on or off.
    pub settings: Settings,
}

impl Server {
    /// Handles one notification.
    pub fn notify(&mut self, note: Notification) {
        match note.method.as_str() {
            DidOpenTextDocument::METHOD => {
                if let Ok(p) =
                    note.extract::<DidOpenTextDocumentParams>(DidOpenTextDocument::METHOD)
                {
                    let key = p.text_document.uri.as_str().to_string();
                    self.documents.insert(key, p.text_document.text);
                    self.edited(&p.text_document.uri);
                }
            }
            DidChangeTextDocument::METHOD => {
                if let Ok(p) =
                    note.extract::<DidChangeTextDocumentParams>(DidChangeTextDocument::METHOD)
                {
                    let key = p.text_document.uri.as_str().to_string();
                    if let Some(doc) = self.documents.get_mut(&key) {
                        for change in p.content_changes {
                            text::apply(doc, change);
                        }
                    }
                    self.edited(&p.text_document.uri);
                }
            }
            DidCloseTextDocument::METHOD => {
                if let Ok(p) =
                    note.extract::<DidCloseTextDocumentParams>(DidCloseTextDocument::METHOD)
                {
                    self.documents.remove(p.text_document.uri.as_str());
                    self.restored(&[p.text_document.uri]);
                }
            }
            DidChangeWatchedFiles::METHOD => {
                if let Ok(p) =
                    note.extract::<DidChangeWatchedFilesParams>(DidChangeWatchedFiles::METHOD)
                {
                    let closed: Vec<Uri> = p
                        .changes
                        .into_iter()
                        .map(|c| c.uri)
                        .filter(|u| !self.documents.contains_key(u.as_str()))
                        .collect();
                    self.restored(&closed);
                }
            }
            DidChangeConfiguration::METHOD => {
                if let Ok(p) =
                    note.extract::<DidChangeConfigurationParams>(DidChangeConfiguration::METHOD)
                {
                    self.settings = self.settings.with(Some(&p.settings));
                }
            }
            _ => {}
        }
    }

    /// Writes the open document `uri` into the project's copy and asks for a check.
    fn edited(&self, uri: &Uri) {
        let (Some(ws), Some(text)) = (&self.workspace, self.documents.get(uri.as_str())) else {
            return;
        };
        if let Some(rel) = ws.relative(uri) {
            if ws.mirror.write(&rel, text).is_ok() {
                ws.checker.request(vec![rel.display().to_string()]);
            }
        }
    }

    /// Takes the files `uris` from disk again and asks for a check.
    fn restored(&self, uris: &[Uri]) {
        let Some(ws) = &self.workspace else {
            return;
        };
        let mut changed = Vec::new();
        for rel in uris.iter().filter_map(|u| ws.relative(u)) {
            let _ = ws.mirror.restore(&rel);
            changed.push(rel.display().to_string());
        }
        ws.checker.request(changed);
    }

    /// Answers one request (`None`: the checking thread answers it).
    pub fn answer(&mut self, req: Request) -> Option<Response> {
        crate::requests::answer(self, req)
    }

    /// The text of `uri`: the open document's, or the file's on disk.
    pub fn text(&self, uri: &Uri) -> Option<String> {
        match self.documents.get(uri.as_str()) {
            Some(t) => Some(t.clone()),
            None => std::fs::read_to_string(to_path(uri)?).ok(),
        }
    }
}

/// Runs the loop until the editor shuts the server down.
pub fn serve(
    connection: &Connection,
    root: Option<PathBuf>,
    settings: Settings,
) -> Result<(), String> {
    let workspace = match root {
        Some(root) => Some(Workspace::open(&root, connection).map_err(|e| e.to_string())?),
        None => None,
    };
    let mut server = Server {
        documents: HashMap::new(),
        workspace,
        settings,
    };
    for message in &connection.receiver {
        match message {
            Message::Request(req) => {
                if connection
                    .handle_shutdown(&req)
                    .map_err(|e| e.to_string())?
                {
                    return Ok(());
                }
                if let Some(response) = server.answer(req) {
                    connection
                        .sender
                        .send(Message::Response(response))
                        .map_err(|e| e.to_string())?;
                }
            }
            Message::Notification(note) => server.notify(note),
            Message::Response(_) => {}
        }
    }
    Ok(())
}
