//! `strata view [RUN]`: a page in the browser that shows the project's plan and graph runs,
//! live. A small synchronous HTTP server ([`server`]) on 127.0.0.1 serves one page built
//! into the binary, the runs as summaries ([`runs`]), each run's definition laid out in Rust
//! ([`layout`], from [`dag`]) and its events tailed from its event log as server-sent events
//! ([`stream`]). Nothing it serves holds a secret value: the event log is redacted when it
//! is written, and every response again when it is sent.

pub mod dag;
pub mod layout;
pub mod runs;
pub mod server;
pub mod stream;

use std::process::ExitCode;

use strata_app::App;
use strata_core::Error;

/// Options of `strata view`.
#[derive(Debug, clap::Args)]
pub struct ViewArgs {
    /// The run to open (`strata runs` lists them); the list of runs when left out
    pub run: Option<String>,
    /// The port to listen on, on 127.0.0.1 (default: a free one)
    #[arg(long)]
    pub port: Option<u16>,
}

/// Runs `strata view`: prints the page's address on standard output, then serves it until
/// the process is stopped.
pub fn run(args: ViewArgs) -> ExitCode {
    match start(&args) {
        Ok(viewer) => {
            viewer.serve();
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error[{}]: {}", e.layer(), e.message());
            if let Some(hint) = e.hint() {
                eprintln!("   = help: {hint}");
            }
            ExitCode::from(2)
        }
    }
}

fn start(args: &ViewArgs) -> Result<server::Viewer, Error> {
    let app = App::open(None, None)?;
    if let Some(id) = &args.run {
        strata_runs::RunStore::new(&app.root).open(id)?;
    }
    let viewer = server::Viewer::bind(app, args.port)?;
    let url = match &args.run {
        Some(id) => format!("{}#/run/{id}", viewer.url()),
        None => viewer.url(),
    };
    println!("strata view: {url}");
    use std::io::Write as _;
    let _ = std::io::stdout().flush();
    Ok(viewer)
}
