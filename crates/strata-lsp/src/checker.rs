//! The check that runs as the user types: on its own thread, over the project's copy
//! ([`crate::mirror`]), so that requests are answered while it runs. Edits that arrive while
//! a check runs are checked together by the next one. Each file's diagnostics are pushed
//! when they change (a file whose diagnostics are gone gets an empty list), and a pull of the
//! workspace's or a document's diagnostics is answered once the edits sent before it are
//! checked.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use crossbeam_channel::Sender;
use lsp_server::{Message, Notification, RequestId, Response};
use lsp_types::notification::{Notification as _, PublishDiagnostics};
use lsp_types::{
    Diagnostic as LspDiagnostic, DocumentDiagnosticReport, FullDocumentDiagnosticReport,
    PublishDiagnosticsParams, RelatedFullDocumentDiagnosticReport, WorkspaceDiagnosticReport,
    WorkspaceDocumentDiagnosticReport, WorkspaceFullDocumentDiagnosticReport,
};
use strata_app::{App, Diagnostic, ProjectIndex};

use crate::diagnostics;
use crate::uri::from_path;

/// The diagnostics of each file, by path relative to the project.
pub type ByFile = BTreeMap<String, Vec<LspDiagnostic>>;

/// What the checking thread is asked.
#[derive(Debug)]
enum Job {
    /// Check the project as it now is, after the files given (relative to the project)
    /// changed.
    Check(Vec<String>),
    /// Answer a pull of every file's diagnostics.
    Workspace(RequestId),
    /// Answer a pull of one file's diagnostics (relative to the project).
    Document(RequestId, String),
}

/// Asks the checking thread for a check, or for an answer once it is done.
#[derive(Debug)]
pub struct Checker {
    jobs: mpsc::Sender<Job>,
}

impl Checker {
    /// Starts the thread checking the copy at `mirror` of the project at `source`, sending
    /// through `out`.
    pub fn start(
        mirror: PathBuf,
        source: PathBuf,
        out: Sender<Message>,
    ) -> std::io::Result<Checker> {
        let (jobs, queue) = mpsc::channel();
        strata_core::work_thread("lsp-check")
            .spawn(move || work(&mirror, &source, &queue, &out))?;
        Ok(Checker { jobs })
    }

    /// Asks for a check of the project as it now is, after the files `changed` (relative
    /// to the project) changed.
    pub fn request(&self, changed: Vec<String>) {
        let _ = self.jobs.send(Job::Check(changed));
    }

    /// Asks for every file's diagnostics, answered to request `id`.
    pub fn pull_workspace(&self, id: RequestId) {
        let _ = self.jobs.send(Job::Workspace(id));
    }

    /// Asks for the diagnostics of `file` (relative to the project), answered to `id`.
    pub fn pull_document(&self, id: RequestId, file: String) {
        let _ = self.jobs.send(Job::Document(id, file));
    }
}

/// The thread's loop: takes every job waiting, checks when one asks for it, then answers.
fn work(mirror: &Path, source: &Path, queue: &mpsc::Receiver<Job>, out: &Sender<Message>) {
    let mut shown: Option<ByFile> = None;
    let mut open = Opened::default();
    while let Ok(first) = queue.recv() {
        let mut jobs = vec![first];
        jobs.extend(queue.try_iter());
        let asked = jobs.iter().any(|j| matches!(j, Job::Check(_)));
        let mut changed: Vec<String> = Vec::new();
        for job in &jobs {
            if let Job::Check(files) = job {
                for file in files {
                    if !changed.contains(file) {
                        changed.push(file.clone());
                    }
                }
            }
        }
        let current = match shown.take() {
            Some(before) if !asked => before,
            before => {
                let now = open.check(mirror, &changed);
                if publish(source, &before.unwrap_or_default(), &now, out).is_err() {
                    return;
                }
                now
            }
        };
        for job in jobs {
            let sent = match job {
                Job::Check(_) => Ok(()),
                Job::Workspace(id) => out.send(workspace_answer(id, source, &current)),
                Job::Document(id, file) => out.send(document_answer(id, &file, &current)),
            };
            if sent.is_err() {
                return;
            }
        }
        shown = Some(current);
    }
}

/// The project kept open between checks, with the settings it was opened with and its
/// check kept up to date file by file ([`ProjectIndex`]).
#[derive(Debug, Default)]
pub struct Opened {
    app: Option<(App, Option<String>, ProjectIndex)>,
}

impl Opened {
    /// The diagnostics of every file of the project at `root`, as `strata check` finds them,
    /// after the files `changed` (relative to `root`) changed: only what the change can
    /// concern is checked again. The project is opened again, and checked whole, when its
    /// settings (`strata.yaml`) change.
    pub fn check(&mut self, root: &Path, changed: &[String]) -> ByFile {
        let settings = std::fs::read_to_string(root.join("strata.yaml")).ok();
        if !matches!(&self.app, Some((_, s, _)) if *s == settings) {
            self.app = None;
        }
        let found = match &mut self.app {
            Some((app, _, index)) => {
                index.update(app, changed);
                Ok(index.report())
            }
            None => App::at(root).map(|app| {
                let index = ProjectIndex::build(&app);
                let report = index.report();
                self.app = Some((app, settings, index));
                report
            }),
        };
        by_file(root, found)
    }
}

/// The diagnostics of the check's outcome `found` on the project at `root`, by file.
fn by_file(root: &Path, found: Result<strata_app::Report, strata_core::Error>) -> ByFile {
    let text = |file: &str| std::fs::read_to_string(root.join(file)).ok();
    match found {
        Ok(mut report) => {
            report.bound();
            diagnostics::by_file(&report, &text)
        }
        Err(e) => {
            let d = Diagnostic::from_error(&e, "strata.yaml");
            let body = text(&d.file).unwrap_or_default();
            BTreeMap::from([(d.file.clone(), vec![diagnostics::one(&d, &body)])])
        }
    }
}

fn workspace_answer(id: RequestId, source: &Path, all: &ByFile) -> Message {
    let items = all
        .iter()
        .filter_map(|(file, items)| {
            Some(WorkspaceDocumentDiagnosticReport::Full(
                WorkspaceFullDocumentDiagnosticReport {
                    uri: from_path(&source.join(file))?,
                    version: None,
                    full_document_diagnostic_report: FullDocumentDiagnosticReport {
                        result_id: None,
                        items: items.clone(),
                    },
                },
            ))
        })
        .collect();
    Message::Response(Response::new_ok(id, WorkspaceDiagnosticReport { items }))
}

fn document_answer(id: RequestId, file: &str, all: &ByFile) -> Message {
    let report = DocumentDiagnosticReport::Full(RelatedFullDocumentDiagnosticReport {
        related_documents: None,
        full_document_diagnostic_report: FullDocumentDiagnosticReport {
            result_id: None,
            items: all.get(file).cloned().unwrap_or_default(),
        },
    });
    Message::Response(Response::new_ok(id, report))
}

/// The editor's end of the connection is gone.
#[derive(Debug)]
struct Closed;

/// Sends the diagnostics of each file whose list changed from `before` to `now`.
fn publish(
    source: &Path,
    before: &ByFile,
    now: &ByFile,
    out: &Sender<Message>,
) -> Result<(), Closed> {
    let gone = before.keys().filter(|f| !now.contains_key(*f));
    let changed = now.iter().filter(|(f, d)| before.get(*f) != Some(*d));
    let sends = gone
        .map(|f| (f, Vec::new()))
        .chain(changed.map(|(f, d)| (f, d.clone())));
    for (file, diagnostics) in sends {
        let Some(uri) = from_path(&source.join(file)) else {
            continue;
        };
        let params = PublishDiagnosticsParams {
            uri,
            diagnostics,
            version: None,
        };
        let note = Notification::new(PublishDiagnostics::METHOD.to_string(), params);
        out.send(Message::Notification(note)).map_err(|_| Closed)?;
    }
    Ok(())
}
