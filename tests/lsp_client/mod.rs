//! The client the end-to-end tests drive `strata lsp` with ([`strata_lsp_client::Client`]
//! on the binary under test), and what `strata check --json` says to compare with.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

use serde_json::Value;
pub use strata_lsp_client::Client;

/// Starts the `strata lsp` under test in `root`, with `root` as the workspace.
pub fn start(root: &Path) -> Client {
    start_with(root, Value::Null)
}

/// [`start`] with the `initializationOptions` `options`.
pub fn start_with(root: &Path, options: Value) -> Client {
    Client::start(Path::new(env!("CARGO_BIN_EXE_strata")), root, options)
}

/// What `strata check --json` prints for the project at `root`, as a list.
pub fn check_json(root: &Path) -> Vec<Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["check", "--json"])
        .current_dir(root)
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stdout)))
}
