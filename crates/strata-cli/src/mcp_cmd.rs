//! `strata mcp`: the project served to LLM agents over the Model Context Protocol (the
//! `strata-mcp` crate; docs/mcp.md).

use std::process::ExitCode;

use clap::Args;
use strata_app::Failure;

use crate::outcome::{open_project_as, report};
use crate::shared_args::SharedArgs;

/// Options of `strata mcp`.
#[derive(Debug, Args)]
pub(crate) struct McpCmd {
    #[command(flatten)]
    mcp: strata_mcp::McpArgs,
    #[command(flatten)]
    shared: SharedArgs,
}

/// Runs `strata mcp` until the client goes away.
pub(crate) fn run(args: McpCmd) -> ExitCode {
    let json = args.shared.json;
    let project = match open_project_as(None, None, json) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let jobs = match args.mcp.jobs {
        Some(n) => match strata_app::settings::jobs_from(n, "--jobs") {
            Ok(jobs) => jobs,
            Err(e) => return report(Failure::Error(e), Some(&project), json),
        },
        None => project.settings.jobs.value,
    };
    let serving = strata_mcp::Serving {
        strict: project.settings.strict_over(args.shared.strict()),
        jobs,
    };
    match strata_mcp::serve(project, &args.mcp, serving) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => report(Failure::Error(e), None, json),
    }
}
