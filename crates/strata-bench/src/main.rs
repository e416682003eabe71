//! `strata-bench`: measures the strata engine and prints one line per comparison,
//! `<workload> strata_ns=<n> peer=<name> peer_ns=<n> ratio=<strata/peer>`.
//!
//! Peers are `minijinja` (same template, both precompiled), `memchr` (a plain scan of the
//! same bytes, the physical floor), `clone` and `copy` (the copying a result of that shape
//! or size needs), `target` (a time budget from the requirements) and `linear` (the
//! previous scaling row extrapolated linearly). Lines starting with `#` are informational;
//! in the full mode they include the spread of the samples. See `docs/benchmarks.md`.

/// The allocator of the `strata` binary: rendering is allocation-bound.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod harness;
mod report;
mod workloads;

use std::process::ExitCode;
use std::time::Instant;

use harness::Settings;
use report::Report;
use workloads::GROUPS;

const USAGE: &str = "usage: strata-bench [--quick] [--only GROUP]... [--iters N]
  --quick       fewer, shorter samples (the whole run takes a few seconds)
  --only GROUP  run only this group (repeatable): config_compile, config_render,
                context, throughput, scaling, exec_run, exec_step, exec_tree, cli_run, batch,
                check, graph, linear, locate, memory, prompts, responses, plan_resolve,
                plan_load, plan_fanout
  --iters N     no warm-up, one sample of exactly N calls per closure (for profilers)";

/// What the command line asked for.
struct Args {
    quick: bool,
    only: Vec<String>,
    iters: Option<u64>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        quick: false,
        only: Vec::new(),
        iters: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--quick" => args.quick = true,
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
    for (name, run) in GROUPS {
        if args.only.is_empty() || args.only.iter().any(|g| g == name) {
            run(&settings, &mut report);
        }
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

/// The 1, 5 and 15 minute load averages (Linux only): other work on the machine skews every
/// number, so the output says how busy it was.
fn load_average() -> Option<String> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let fields: Vec<&str> = text.split_whitespace().take(3).collect();
    (fields.len() == 3).then(|| fields.join(" "))
}
