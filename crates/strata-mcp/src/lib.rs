//! `strata mcp`: a project served to LLM agents over the Model Context Protocol, through the
//! application layer like every other front-end.
//!
//! * Every runnable item — each tool, graph, directive and plan file, and `run_plan`, which
//!   runs a plan the agent writes — is an MCP tool (`catalog.rs`), named as `strata tools`
//!   names it with `/` written `.` (`names.rs`), its `inputSchema` from the item's declared
//!   parameters or inputs, its `outputSchema` from a tool's declared `outputs`.
//! * Each call runs on a thread of its own (`call.rs`) through strata-app: the gate, the
//!   limits, the records under `.strata/runs/` and the secret handling of every front-end. A
//!   refused or failed call is a result with `isError` whose structured content is the
//!   `--json` error shape; progress goes out per step; `notifications/cancelled` stops the
//!   run and its processes ([`strata_app::Cancel`]).
//! * Prompt templates are MCP prompts (`prompts.rs`), run records and item sources are
//!   resources (`resources.rs`), and `completion/complete` offers item names, run ids and
//!   prompt keys.
//! * Transports: stdio (the default), and Streamable HTTP on loopback with `Host` and `Origin`
//!   checked and an optional bearer token (`http.rs`). The project's files are watched
//!   (`watch.rs`): a change sends `notifications/tools/list_changed`.

mod call;
mod catalog;
mod complete;
mod http;
mod names;
mod progress;
mod prompts;
mod resources;
mod schema;
mod select;
mod server;
mod watch;

use std::path::PathBuf;

use strata_app::App;
use strata_core::{Error, ErrorKind, Layer};

/// The options of `strata mcp`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct McpArgs {
    /// Serve Streamable HTTP at ADDR (default 127.0.0.1:8765) instead of standard input and
    /// output; an address that is not loopback needs --token-file
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = http::DEFAULT_ADDR)]
    pub http: Option<String>,
    /// A file holding the bearer token every HTTP request must carry (`Authorization:
    /// Bearer …`)
    #[arg(long, value_name = "FILE", requires = "http")]
    pub token_file: Option<PathBuf>,
    /// Expose only the items whose MCP name or strata id matches one of these globs
    /// (repeatable: `--tools 'examples.*' --tools run_plan`)
    #[arg(long = "tools", value_name = "GLOB")]
    pub tools: Vec<String>,
    /// Hide the items whose MCP name or strata id matches one of these globs (repeatable;
    /// wins over --tools)
    #[arg(long = "exclude", value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Expose only what cannot change anything: tools that declare `read_only: true`, and
    /// the directives, graphs and plan files that call nothing else (not `run_plan`)
    #[arg(long)]
    pub read_only: bool,
    /// The most steps of a plan running at once, from 1 to 256 (default: `jobs` in
    /// strata.yaml, STRATA_JOBS, or 4)
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<u64>,
}

/// How the server runs its calls: from the command line and the project's settings.
#[derive(Debug, Clone)]
pub struct Serving {
    /// Missing variables and parameters are errors.
    pub strict: bool,
    /// The most plan steps running at once.
    pub jobs: usize,
}

/// Serves `app` until the client closes standard input (stdio) or the process is stopped
/// (HTTP). Fails when the options are wrong or the transport cannot start.
pub fn serve(app: App, args: &McpArgs, serving: Serving) -> Result<(), Error> {
    let select = select::Select::new(&args.tools, &args.exclude, args.read_only)?;
    let token = args
        .token_file
        .as_deref()
        .map(http::read_token)
        .transpose()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("strata-mcp")
        .enable_all()
        .build()
        .map_err(|e| {
            Error::new(
                Layer::REQUEST,
                ErrorKind::Io,
                format!("cannot start the server's runtime: {e}"),
            )
            .with_source(e)
        })?;
    let shared = server::Shared::new(app, serving, select);
    runtime.block_on(async move {
        watch::start(shared.clone());
        match &args.http {
            Some(addr) => http::serve(shared, addr, token).await,
            None => server::serve_stdio(shared).await,
        }
    })
}

/// An error of the request layer with `hint`.
pub(crate) fn request_error(kind: ErrorKind, message: String, hint: &str) -> Error {
    Error::new(Layer::REQUEST, kind, message).with_hint(hint)
}
