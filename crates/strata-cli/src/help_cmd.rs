//! `strata help`: the help of strata or of a command (`strata help plan run`, as `--help`
//! prints it), or a topic that holds for every command (`strata help exit-codes`).

use std::process::ExitCode;

use clap::Args;
use strata_core::{did_you_mean, Error, ErrorKind, Layer};

use crate::outcome::report;

/// Options of `strata help`.
#[derive(Debug, Args)]
pub(crate) struct HelpArgs {
    /// A command (`run`, `plan run`) or a topic (exit-codes, environment, settings); none:
    /// strata's own help
    #[arg(value_name = "COMMAND|TOPIC")]
    pub(crate) words: Vec<String>,
    #[command(flatten)]
    pub(crate) shared: crate::shared_args::SharedArgs,
}

/// The text `strata help WORDS` prints.
fn text(words: &[String]) -> Result<String, Error> {
    if let [one] = words {
        if let Some(topic) = crate::topics::find(one) {
            return Ok(topic.text.to_string());
        }
    }
    let mut cmd = crate::command();
    cmd.build();
    let mut found = &mut cmd;
    for word in words {
        let names: Vec<String> = found
            .get_subcommands()
            .map(|s| s.get_name().to_string())
            .collect();
        match found.find_subcommand_mut(word) {
            Some(sub) => found = sub,
            None => return Err(unknown(words, &names)),
        }
    }
    Ok(found.render_long_help().ansi().to_string())
}

/// The error for words that name no command and no topic.
fn unknown(words: &[String], commands: &[String]) -> Error {
    let shown = strata_core::shown(&words.join(" "));
    let e = Error::new(
        Layer::REQUEST,
        ErrorKind::Invalid,
        format!("there is no command or topic `{shown}`"),
    );
    let last = words.last().map(String::as_str).unwrap_or_default();
    let topics = crate::topics::TOPICS.iter().map(|t| t.name);
    let names = commands.iter().map(String::as_str).chain(topics);
    match did_you_mean(last, names) {
        Some(near) => e.with_hint(format!("did you mean `{near}`?")),
        None => e.with_hint("`strata --help` lists the commands and the topics"),
    }
}

/// Runs `strata help`.
pub(crate) fn run(args: HelpArgs) -> ExitCode {
    match text(&args.words) {
        Ok(text) => {
            crate::output::print_styled(&text);
            ExitCode::SUCCESS
        }
        Err(e) => report(strata_app::Failure::Error(e), None, args.shared.json),
    }
}
