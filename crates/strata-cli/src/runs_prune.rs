//! `strata runs prune [--older-than 7d] [--status S]… [--dry-run]`: removes the directories of
//! finished runs. A run a live process holds is never removed.

use std::io::Write;
use std::process::ExitCode;

use clap::Args;
use strata_core::{did_you_mean, Error, ErrorKind, Layer};
use strata_runs::{now, RunStore};

use crate::run::{print_error, STRATA_FAILED};
use crate::runs_cmd::rows;

/// The statuses a run can be pruned in (`running` is not one: a live run is never removed).
const PRUNABLE: [&str; 6] = [
    "completed",
    "failed",
    "limited",
    "interrupted",
    "waiting",
    "unknown",
];

/// The statuses pruned without `--status`: the runs that ended.
const ENDED: [&str; 3] = ["completed", "failed", "limited"];

/// Options of `strata runs prune`.
#[derive(Debug, Args)]
pub struct PruneArgs {
    /// Only runs whose last checkpoint is older than this: a number and a unit, s, m, h, d or
    /// w (`7d`, `12h`)
    #[arg(long, value_name = "AGE", value_parser = parse_age)]
    pub older_than: Option<u64>,
    /// Only runs in this status (repeatable; default: completed, failed and limited — an
    /// interrupted run can still be resumed)
    #[arg(long, value_name = "STATUS")]
    pub status: Vec<String>,
    /// List what would be removed, remove nothing
    #[arg(long)]
    pub dry_run: bool,
}

/// An age on the command line, in seconds.
fn parse_age(text: &str) -> Result<u64, String> {
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (n, unit) = text.split_at(split);
    let scale = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3_600,
        "d" => 86_400,
        "w" => 604_800,
        _ => 0,
    };
    match n.parse::<u64>() {
        Ok(n) if scale > 0 => n
            .checked_mul(scale)
            .ok_or_else(|| format!("`{text}` is too long ago")),
        _ => Err(format!(
            "`{text}` is not an age: write a number and a unit, s, m, h, d or w (`7d`)"
        )),
    }
}

/// The statuses asked for, each checked.
fn statuses(asked: &[String]) -> Result<Vec<&str>, Error> {
    if asked.is_empty() {
        return Ok(ENDED.to_vec());
    }
    asked
        .iter()
        .map(|s| {
            if let Some(known) = PRUNABLE.iter().find(|p| **p == s) {
                return Ok(*known);
            }
            let hint = match (s.as_str(), did_you_mean(s, PRUNABLE.iter().copied())) {
                ("running", _) => "a run a live process holds is never removed".to_string(),
                (_, Some(near)) => format!("did you mean `{near}`?"),
                _ => format!("the statuses are {}", PRUNABLE.join(", ")),
            };
            Err(Error::new(
                Layer::REQUEST,
                ErrorKind::Invalid,
                format!("runs in status `{s}` cannot be pruned"),
            )
            .with_hint(hint))
        })
        .collect()
}

/// Runs `strata runs prune`.
pub fn run(store: &RunStore, args: &PruneArgs) -> ExitCode {
    let wanted = match statuses(&args.status) {
        Ok(w) => w,
        Err(e) => {
            print_error(&e, None);
            return ExitCode::from(STRATA_FAILED);
        }
    };
    let before = now().saturating_sub(args.older_than.unwrap_or(0));
    let verb = if args.dry_run {
        "would remove"
    } else {
        "removed"
    };
    let mut out = String::new();
    let mut failed = false;
    for row in rows(store) {
        if !wanted.contains(&row.status()) || row.updated > before {
            continue;
        }
        if !args.dry_run {
            if let Err(e) = std::fs::remove_dir_all(store.dir.join(row.id())) {
                let e = Error::new(
                    Layer::REQUEST,
                    ErrorKind::Io,
                    format!("cannot remove run `{}`: {e}", row.id()),
                );
                print_error(&e, None);
                failed = true;
                continue;
            }
        }
        out.push_str(&format!(
            "{verb} {} ({}, {})\n",
            row.id(),
            row.target(),
            row.status()
        ));
    }
    if out.is_empty() {
        out.push_str("no run to remove\n");
    }
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_have_a_unit() {
        assert_eq!(parse_age("7d"), Ok(604_800));
        assert_eq!(parse_age("90s"), Ok(90));
        assert_eq!(parse_age("2w"), Ok(1_209_600));
        assert_eq!(
            parse_age("7"),
            Err("`7` is not an age: write a number and a unit, s, m, h, d or w (`7d`)".into())
        );
        assert!(parse_age("d").is_err());
        assert!(parse_age("99999999999999999999w").is_err());
    }
}
