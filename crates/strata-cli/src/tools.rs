//! `strata tools`: the tools of the project with their descriptions.

use std::io::Write;
use std::process::ExitCode;

use clap::Args;

use crate::outcome::open_project;
use crate::shared_args::SharedArgs;

/// Options of `strata tools`.
#[derive(Debug, Args)]
pub struct ToolsArgs {
    #[command(flatten)]
    pub shared: SharedArgs,
}

/// Runs `strata tools`: one line per tool, `id  description`; exits 1 when a file is invalid.
pub fn run(args: ToolsArgs) -> ExitCode {
    let project = match open_project(args.shared.project(), None) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let entries = project.list();
    let width = entries.iter().map(|e| e.id.len()).max().unwrap_or(0);
    let mut out = String::new();
    let mut invalid = false;
    for e in &entries {
        let text = match &e.description {
            Ok(d) => d.clone(),
            Err(why) => {
                invalid = true;
                format!("(invalid: {why})")
            }
        };
        out.push_str(format!("{:<width$}  {text}", e.id).trim_end());
        out.push('\n');
    }
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    if invalid {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
