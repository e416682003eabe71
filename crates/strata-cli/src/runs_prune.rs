//! `strata runs prune [--older-than 7d] [--status S]… [--dry-run]`: removes the directories of
//! finished runs. A run a live process holds is never removed.

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use strata_core::{did_you_mean, parse_duration, Error, ErrorKind, Layer};
use strata_runs::{now, RunStore};

use serde_json::json;
use strata_app::Failure;

use crate::outcome::{print_error, report};
use crate::runs_table::{rows, STARTED};

/// The statuses a run can be pruned in (`running` is not one: a live run is never removed).
const PRUNABLE: [&str; 8] = [
    "completed",
    "failed",
    "limited",
    "interrupted",
    "waiting",
    "cancelled",
    STARTED,
    "unknown",
];

/// The statuses pruned without `--status`: the runs that ended.
const ENDED: [&str; 3] = ["completed", "failed", "limited"];

/// Options of `strata runs prune`.
#[derive(Debug, Args)]
pub(crate) struct PruneArgs {
    /// Only runs whose last checkpoint is older than this duration: a number and a unit, ms,
    /// s, m, h, d or w (7d, 12h, 30m, 1.5h)
    #[arg(long, value_name = "AGE", value_parser = parse_duration)]
    pub(crate) older_than: Option<Duration>,
    /// Only runs in this status (repeatable; default: completed, failed and limited — an
    /// interrupted run can still be resumed)
    #[arg(long, value_name = "STATUS")]
    pub(crate) status: Vec<String>,
    /// List what would be removed, remove nothing
    #[arg(long)]
    pub(crate) dry_run: bool,
}

/// The newest last-checkpoint time (in seconds since the epoch, as runs record it) of a run
/// older than `age` at `now`: a fraction of a second counts as a whole one, so a run is never
/// removed younger than asked.
fn cutoff(now: u64, age: Duration) -> u64 {
    let secs = age.as_secs() + u64::from(age.subsec_nanos() > 0);
    now.saturating_sub(secs)
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
                format!(
                    "runs in status `{}` cannot be pruned",
                    strata_core::shown(s)
                ),
            )
            .with_hint(hint))
        })
        .collect()
}

/// Runs `strata runs prune`; with `json` (`--json`) it prints `{"ok": …, "dry_run": …,
/// "removed": [{"id", "target", "status"}…]}` (docs/schemas/runs-prune.schema.json).
pub(crate) fn run(store: &RunStore, args: &PruneArgs, json: bool) -> ExitCode {
    let wanted = match statuses(&args.status) {
        Ok(w) => w,
        Err(e) => return report(Failure::Error(e), None, json),
    };
    let before = cutoff(now(), args.older_than.unwrap_or_default());
    let verb = if args.dry_run {
        "would remove"
    } else {
        "removed"
    };
    let mut out = String::new();
    let mut removed = Vec::new();
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
                )
                .with_source(e);
                if !json {
                    print_error(&e, None);
                }
                failed = true;
                continue;
            }
        }
        removed.push(json!({"id": row.id(), "target": row.target(), "status": row.status()}));
        out.push_str(&format!(
            "{verb} {} ({}, {})\n",
            row.id(),
            row.target(),
            row.status()
        ));
    }
    if json {
        let value = json!({"ok": !failed, "dry_run": args.dry_run, "removed": removed});
        out = serde_json::to_string_pretty(&value).unwrap_or_default() + "\n";
    } else if out.is_empty() {
        out.push_str("no run to remove\n");
    }
    crate::output::print(&out);
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
    fn ages_are_durations_and_a_fraction_of_a_second_counts_whole() {
        assert_eq!(cutoff(1_000, Duration::from_secs(7 * 86_400)), 0);
        assert_eq!(cutoff(1_000_000, Duration::from_secs(90)), 999_910);
        assert_eq!(cutoff(1_000_000, Duration::from_millis(500)), 999_999);
        assert_eq!(cutoff(1_000_000, Duration::from_millis(1_500)), 999_998);
        assert_eq!(cutoff(1_000_000, Duration::ZERO), 1_000_000);
        assert_eq!(cutoff(5, Duration::from_millis(u64::MAX)), 0);
    }
}
