//! `strata-bench`: measures the strata engine and prints one line per comparison,
//! `<workload> strata_ns=<n> peer=<name> peer_ns=<n> ratio=<strata/peer>`.
//!
//! Peers are `minijinja` (same template, both precompiled), `memchr` (a plain scan of the
//! same bytes, the physical floor), `clone` and `copy` (the copying a result of that shape
//! or size needs), `target` (a time budget from the requirements) and `linear` (the
//! previous scaling row extrapolated linearly). Lines starting with `#` are informational;
//! in the full mode they include the spread of the samples. See `docs/benchmarks.md`.
//!
//! `--smoke` measures nothing: every group runs once, each closure called once on small
//! inputs, so that the workloads' own checks (what each asserts about its results) run in a
//! few seconds; a group whose check fails, or that compares nothing, makes it exit 1 with
//! the group's name. CI runs it (`.ci/bench-smoke`).

/// The allocator of the `strata` binary: rendering is allocation-bound.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod harness;
mod report;
mod workloads;

use std::panic::{self, AssertUnwindSafe};
use std::process::ExitCode;
use std::time::Instant;

use harness::{strata_binary, Settings};
use report::Report;
use workloads::GROUPS;

const USAGE: &str = "usage: strata-bench [--quick | --smoke] [--only GROUP]... [--iters N]
  --quick       fewer, shorter samples (the whole run takes a few seconds)
  --smoke       measure nothing: every group once, one call per closure on small inputs, its
                self-checks asserted; exits 1 naming each group that fails (needs the
                strata binary built next to strata-bench)
  --only GROUP  run only this group (repeatable): config_compile, config_render,
                context, throughput, scaling, exec_run, exec_step, exec_tree, cli_run, batch, mcp,
                check, graph, gate, linear, locate, memory, prompts, responses, plan_resolve,
                plan_load, plan_fan_in, plan_fanout, env_text, event_log, lsp
  --iters N     no warm-up, one sample of exactly N calls per closure (for profilers)";

/// What the command line asked for.
struct Args {
    quick: bool,
    smoke: bool,
    only: Vec<String>,
    iters: Option<u64>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        quick: false,
        smoke: false,
        only: Vec::new(),
        iters: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--quick" => args.quick = true,
            "--smoke" => args.smoke = true,
            "--only" => {
                let group = it.next().ok_or("--only needs a group name")?;
                if !GROUPS.iter().any(|(name, _)| *name == group) {
                    return Err(format!("unknown group `{group}`"));
                }
                args.only.push(group);
            }
            "--iters" => {
                let n = it.next().ok_or("--iters needs a number")?;
                let n = n
                    .parse()
                    .map_err(|_| format!("--iters: `{n}` is not a number"))?;
                args.iters = Some(n);
            }
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if args.smoke && (args.quick || args.iters.is_some()) {
        return Err("--smoke runs each closure once: it takes neither --quick nor --iters".into());
    }
    Ok(args)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("strata-bench: {message}");
            }
            eprintln!("{USAGE}");
            return if message.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(2)
            };
        }
    };
    if args.smoke {
        return smoke(&args.only);
    }
    let mut settings = if args.quick {
        Settings::quick()
    } else {
        Settings::full()
    };
    settings.fixed_iters = args.iters;
    let mut report = Report {
        verbose: !args.quick,
        ..Report::default()
    };
    report.note(&format!(
        "strata-bench {} mode: warm-up {:?}, {} samples of ~{:?} each, median ns per iteration",
        if args.quick { "quick" } else { "full" },
        settings.warmup,
        settings.samples,
        settings.sample_time,
    ));
    if let Some(load) = load_average() {
        report.note(&format!("load average at start: {load}"));
    }
    let start = Instant::now();
    for (_, run) in selected(&args.only) {
        run(&settings, &mut report);
    }
    report.note(&format!(
        "{} comparisons in {:.1} s",
        report.comparisons.len(),
        start.elapsed().as_secs_f64()
    ));
    if let Some(load) = load_average() {
        report.note(&format!("load average at end: {load}"));
    }
    ExitCode::SUCCESS
}

/// The groups a run covers: those `--only` names, every group without it.
fn selected(only: &[String]) -> Vec<&'static workloads::Group> {
    GROUPS
        .iter()
        .filter(|(name, _)| only.is_empty() || only.iter().any(|g| g == name))
        .collect()
}

/// `--smoke`: runs each selected group once with [`Settings::smoke`], catching the panic of a
/// failed self-check so that every group runs; prints one line per group and exits 1 naming
/// the groups that failed or compared nothing.
fn smoke(only: &[String]) -> ExitCode {
    if strata_binary().is_none() {
        eprintln!(
            "strata-bench --smoke: no `strata` binary next to this one: build both with the \
             same profile (`cargo build -p strata -p strata-bench`)"
        );
        return ExitCode::FAILURE;
    }
    let settings = Settings::smoke();
    let mut report = Report {
        silent: true,
        ..Report::default()
    };
    println!("# strata-bench smoke mode: one call per closure on small inputs, no measurement");
    let start = Instant::now();
    let groups = selected(only);
    let mut failed = Vec::new();
    for (name, run) in &groups {
        let began = Instant::now();
        let before = report.comparisons.len();
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| run(&settings, &mut report)));
        let made = report.comparisons.len().saturating_sub(before);
        let why = match outcome {
            Ok(()) if made > 0 => {
                println!(
                    "smoke {name} ok: {made} comparisons in {:.2} s",
                    began.elapsed().as_secs_f64()
                );
                continue;
            }
            Ok(()) => "it compared nothing (every part of it was skipped)".to_string(),
            Err(payload) => panic_message(payload.as_ref()),
        };
        eprintln!("strata-bench --smoke: group `{name}` failed: {why}");
        failed.push(*name);
    }
    println!(
        "# smoke: {} of {} groups ok in {:.1} s",
        groups.len() - failed.len(),
        groups.len(),
        start.elapsed().as_secs_f64()
    );
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        eprintln!("strata-bench --smoke: failed groups: {}", failed.join(", "));
        ExitCode::FAILURE
    }
}

/// The message a panic was raised with.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "a panic without a message".to_string())
}

/// The 1, 5 and 15 minute load averages (Linux only): other work on the machine skews every
/// number, so the output says how busy it was.
fn load_average() -> Option<String> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let fields: Vec<&str> = text.split_whitespace().take(3).collect();
    (fields.len() == 3).then(|| fields.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Smoke mode (CI) reaches every workload: without `--only` it runs the whole registry,
    /// the same list in the same order as the full run.
    #[test]
    fn smoke_runs_every_group() {
        let smoke: Vec<&str> = selected(&[]).iter().map(|(name, _)| *name).collect();
        let all: Vec<&str> = GROUPS.iter().map(|(name, _)| *name).collect();
        assert_eq!(smoke, all);
        let mut unique = all.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), all.len(), "group names are unique");
    }

    /// Every group is registered in `GROUPS` and listed in the usage: each workload module's
    /// entry points appear in the registry.
    #[test]
    fn usage_lists_every_group() {
        for (name, _) in GROUPS {
            assert!(
                USAGE
                    .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .any(|w| w == *name),
                "`{name}` is missing from the usage"
            );
        }
    }

    /// Every workload entry point (`pub fn …(settings: &Settings, report: &mut Report)` in
    /// `src/workloads/`) is registered once: as many entry points as groups, no function
    /// registered twice.
    #[test]
    fn every_workload_entry_point_is_a_group() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/workloads");
        let mut entry_points = Vec::new();
        for file in std::fs::read_dir(dir).expect("the workloads directory") {
            let path = file.expect("an entry").path();
            let text = std::fs::read_to_string(&path).expect("a source file");
            let squashed: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
            for piece in squashed.split("pub fn ").skip(1) {
                if piece.contains("(settings: &Settings, report: &mut Report)")
                    && piece.find('(') == piece.find("(settings: &Settings, report: &mut Report)")
                {
                    let name = &piece[..piece.find('(').unwrap_or(0)];
                    entry_points.push(format!("{}::{name}", path.display()));
                }
            }
        }
        let mut pointers: Vec<usize> = GROUPS.iter().map(|(_, run)| *run as usize).collect();
        pointers.sort_unstable();
        pointers.dedup();
        assert_eq!(
            pointers.len(),
            GROUPS.len(),
            "a workload is registered twice"
        );
        assert_eq!(
            entry_points.len(),
            GROUPS.len(),
            "entry points {entry_points:?} against {} groups",
            GROUPS.len()
        );
    }

    #[test]
    fn only_selects_the_named_groups() {
        let only = vec!["linear".to_string(), "check".to_string()];
        let names: Vec<&str> = selected(&only).iter().map(|(name, _)| *name).collect();
        assert_eq!(names, ["check", "linear"]);
    }

    #[test]
    fn a_panic_message_is_kept() {
        let payload = panic::catch_unwind(|| panic!("expected {} diagnostics", 3)).unwrap_err();
        assert_eq!(panic_message(payload.as_ref()), "expected 3 diagnostics");
    }
}
