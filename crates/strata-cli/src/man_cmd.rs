//! `strata man`: the manual pages of strata and of each of its commands, made with
//! clap_mangen from the same definitions as `--help` — one page printed (`strata man plan
//! run`), or every page installed into a directory (`strata man --install DIR`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use clap_mangen::roff::{bold, roman, Roff};
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

/// The EXAMPLES, EXIT STATUS and ENVIRONMENT sections of the page named `name`
/// (`strata-plan-run`): its examples, and the topics that hold for every command.
fn sections(name: &str) -> Roff {
    let path = name
        .trim_start_matches("strata")
        .trim_start_matches('-')
        .replace('-', " ");
    let mut roff = Roff::new();
    let examples = crate::examples::of(&path);
    if !examples.is_empty() {
        roff.control("SH", ["EXAMPLES"]);
        for (what, line) in examples {
            roff.control("PP", []).text([roman(*what)]);
            roff.control("RS", ["4"]).control("nf", []);
            roff.text([bold(format!("$ {line}"))]);
            roff.control("fi", []).control("RE", []);
        }
    }
    for (title, topic) in [
        ("EXIT STATUS", "exit-codes"),
        ("ENVIRONMENT", "environment"),
    ] {
        let Some(topic) = crate::topics::find(topic) else {
            continue;
        };
        roff.control("SH", [title]).control("nf", []);
        for line in topic.text.lines() {
            roff.text([roman(line)]);
        }
        roff.control("fi", []);
    }
    roff
}

fn io_error(what: &str, e: std::io::Error) -> Error {
    Error::new(Layer::REQUEST, ErrorKind::Io, format!("{what}: {e}")).with_source(e)
}

/// The text of the page of `cmd`: clap_mangen's sections (the examples at the end of
/// `--help` become EXAMPLES, not clap_mangen's EXTRA), then [`sections`].
fn rendered(cmd: &clap::Command) -> Result<Vec<u8>, Error> {
    let has_subcommands = cmd.get_subcommands().any(|s| !s.is_hide_set());
    let has_version = cmd.get_version().is_some();
    let page = page_of(cmd.clone());
    let mut out = Vec::new();
    let mut write = || -> std::io::Result<()> {
        page.render_title(&mut out)?;
        page.render_name_section(&mut out)?;
        page.render_synopsis_section(&mut out)?;
        page.render_description_section(&mut out)?;
        page.render_options_section(&mut out)?;
        if has_subcommands {
            page.render_subcommands_section(&mut out)?;
        }
        sections(&page.get_filename().replace(".1", "")).to_writer(&mut out)?;
        match has_version {
            true => page.render_version_section(&mut out),
            false => Ok(()),
        }
    };
    write().map_err(|e| io_error("cannot render the page", e))?;
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
        let text = rendered(page)?;
        return Ok(String::from_utf8_lossy(&text).into_owned());
    };
    std::fs::create_dir_all(dir)
        .map_err(|e| io_error(&format!("cannot create `{}`", dir.display()), e))?;
    let mut written = Vec::new();
    for page in pages {
        // Replaces a link of that name itself: nothing is written outside `dir`.
        let name = page_of(page.clone()).get_filename();
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
