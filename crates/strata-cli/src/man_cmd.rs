//! `strata man`: the manual pages of strata and of each of its commands, made with
//! clap_mangen from the same definitions as `--help` — one page printed (`strata man plan
//! run`), or every page installed into a directory (`strata man --install DIR`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use clap_mangen::Man;
use strata_core::{did_you_mean, Error, ErrorKind, Layer};

use crate::outcome::report;

/// Options of `strata man`.
#[derive(Debug, Args)]
pub(crate) struct ManArgs {
    /// The command whose page to print (`run`, `plan run`); none: strata's own page
    #[arg(value_name = "COMMAND")]
    pub(crate) command: Vec<String>,
    /// Write every page (`strata.1`, `strata-run.1`, `strata-plan-run.1`, …) into DIR,
    /// creating it (`~/.local/share/man/man1` makes them `man strata-run`); a link in DIR
    /// by a page's name is replaced by the page, never written through
    #[arg(long, value_name = "DIR", value_hint = clap::ValueHint::DirPath, conflicts_with = "command")]
    pub(crate) install: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) shared: crate::shared_args::SharedArgs,
}

/// The command line, built (subcommands named `strata-run`, `strata-plan-run`), with every
/// page it has, depth first, strata's own first.
fn pages() -> Vec<clap::Command> {
    fn walk(cmd: &clap::Command, out: &mut Vec<clap::Command>) {
        out.push(cmd.clone());
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            walk(sub, out);
        }
    }
    let mut cmd = crate::command().disable_help_subcommand(true);
    cmd.build();
    let mut out = Vec::new();
    walk(&cmd, &mut out);
    out
}

/// The page of `cmd`, its source naming strata's version.
fn page_of(cmd: clap::Command) -> Man {
    Man::new(cmd).source(format!("strata {}", env!("STRATA_VERSION")))
}

fn io_error(what: &str, e: std::io::Error) -> Error {
    Error::new(Layer::REQUEST, ErrorKind::Io, format!("{what}: {e}")).with_source(e)
}

/// The text of `page`.
fn rendered(page: &Man) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    page.render(&mut out)
        .map_err(|e| io_error("cannot render the page", e))?;
    Ok(out)
}

fn man(args: &ManArgs) -> Result<String, Error> {
    let pages = pages();
    let Some(dir) = &args.install else {
        let wanted = std::iter::once("strata")
            .chain(args.command.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join("-");
        let names = pages
            .iter()
            .map(|p| p.get_display_name().unwrap_or(p.get_name()));
        let Some(page) = pages
            .iter()
            .find(|p| p.get_display_name().unwrap_or(p.get_name()) == wanted)
        else {
            let e = Error::new(
                Layer::REQUEST,
                ErrorKind::Invalid,
                format!(
                    "there is no command `{}`",
                    strata_core::shown(&args.command.join(" "))
                ),
            );
            return Err(match did_you_mean(&wanted, names) {
                Some(near) => e.with_hint(format!(
                    "did you mean `{}`?",
                    near.trim_start_matches("strata-").replace('-', " ")
                )),
                None => e.with_hint("`strata --help` lists the commands"),
            });
        };
        let text = rendered(&page_of(page.clone()))?;
        return Ok(String::from_utf8_lossy(&text).into_owned());
    };
    std::fs::create_dir_all(dir)
        .map_err(|e| io_error(&format!("cannot create `{}`", dir.display()), e))?;
    let mut written = Vec::new();
    for page in pages {
        let page = page_of(page);
        // Replaces a link of that name itself: nothing is written outside `dir`.
        let name = page.get_filename();
        strata_runs::write_atomic(dir, &name, &rendered(&page)?)?;
        written.push(dir.join(name).display().to_string());
    }
    Ok(if args.shared.json {
        let doc = serde_json::json!({"ok": true, "dir": dir, "pages": written});
        serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
    } else {
        format!(
            "installed {} man pages in `{}` (`man strata`, `man strata-run`, …; the directory must be on MANPATH or next to a bin/ on PATH)\n",
            written.len(),
            dir.display()
        )
    })
}

/// Runs `strata man`.
pub(crate) fn run(args: ManArgs) -> ExitCode {
    match man(&args) {
        Ok(text) => {
            crate::output::print(&text);
            ExitCode::SUCCESS
        }
        Err(e) => report(strata_app::Failure::Error(e), None, args.shared.json),
    }
}
