//! The env layer over plain text through the binary, against GNU `envsubst`.
//!
//! * `env_text_10mb_bin`: `strata render --layer env --text doc.txt` of a 10 MB text
//!   (`k<n>: "word ${VAR<i>} word ${VAR<j>} …"`, ten placeholders a line, a hundred variables
//!   set), written to /dev/null; the wall time of one run against `envsubst < doc.txt` on the
//!   same file and environment (`peer=envsubst`), the two runs alternating.
//! * `env_text_10mb_rss_bin`: the peak resident memory of the same runs, in **bytes** (not
//!   nanoseconds), against envsubst's (`peer=envsubst`).
//! * `env_text_10mb_rss_target`: the same peak against the 8 MB budget (`peer=target`).
//!
//! Both outputs are checked byte for byte equal first. Without `envsubst` on `PATH` only the
//! budget row is made, and a note says so.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::harness::{of_calls, run_rss, strata_binary, Settings};
use crate::report::Report;

/// Size of the text.
pub const LEN: usize = 10_000_000;
/// Size of the text in smoke mode.
const SMOKE_LEN: usize = 64 << 10;
/// Variables set (`VAR0` … `VAR99`).
const VARS: usize = 100;
/// The peak memory budget, in bytes.
const RSS_TARGET: f64 = 8e6;
/// Runs of each program in quick mode.
const RUNS_QUICK: usize = 5;

/// A text of `len` bytes: lines of ten words, each followed by a placeholder.
pub fn text(len: usize) -> String {
    const WORDS: [&str; 8] = [
        "the", "engine", "renders", "config", "values", "into", "text", "tools",
    ];
    let mut out = String::with_capacity(len + 256);
    let (mut line, mut hole) = (0usize, 0usize);
    while out.len() < len {
        out.push_str(&format!("k{line}: \""));
        for w in 0..10 {
            let word = WORDS[(line * 7 + w * 3) % WORDS.len()];
            out.push_str(&format!("{word} ${{VAR{}}} ", hole % VARS));
            hole += 1;
        }
        out.push_str("\"\n");
        line += 1;
    }
    out
}

/// `envsubst` on `PATH`, when installed.
fn envsubst() -> Option<PathBuf> {
    std::env::var("PATH")
        .ok()?
        .split(':')
        .map(|d| Path::new(d).join("envsubst"))
        .find(|p| p.is_file())
}

/// The standard output of `program args…` with `stdin` as its input and `env` alone.
fn output_of(program: &Path, args: &[&str], stdin: &Path, env: &[(&str, &str)]) -> Vec<u8> {
    let out = Command::new(program)
        .args(args)
        .env_clear()
        .envs(env.iter().copied())
        .stdin(Stdio::from(std::fs::File::open(stdin).expect("the text")))
        .stderr(Stdio::null())
        .output()
        .expect("runs");
    assert!(out.status.success(), "{} failed", program.display());
    out.stdout
}

/// Measures the streamed render against `envsubst`.
pub fn run(settings: &Settings, report: &mut Report) {
    let Some(bin) = strata_binary() else {
        report.note("no strata binary next to strata-bench: the env_text rows are skipped");
        return;
    };
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let doc = tmp.path().join("doc.txt");
    let text = text(settings.pick(LEN, LEN, SMOKE_LEN));
    std::fs::write(&doc, &text).expect("write");
    let names: Vec<String> = (0..VARS).map(|i| format!("VAR{i}")).collect();
    let values: Vec<String> = (0..VARS).map(|i| format!("value{i}")).collect();
    let env: Vec<(&str, &str)> = names
        .iter()
        .map(String::as_str)
        .zip(values.iter().map(String::as_str))
        .collect();
    let args = ["render", "--layer", "env", "--text", "-"];
    let ours = output_of(&bin, &args, &doc, &env);
    let peer = envsubst();
    if let Some(envsubst) = &peer {
        let theirs = output_of(envsubst, &[], &doc, &env);
        assert!(ours == theirs, "strata's text differs from envsubst's");
    } else {
        assert!(!ours.is_empty() && !ours.windows(2).any(|w| w == b"${"));
        report.note("env_text: envsubst is not installed: only the budget row is measured");
    }
    let runs = settings.pick(settings.samples, RUNS_QUICK, 1);
    let mut strata = Vec::new();
    let mut other = Vec::new();
    for _ in 0..runs {
        strata.push(run_rss(&bin, tmp.path(), &args, &env, Some(&doc)));
        if let Some(envsubst) = &peer {
            other.push(run_rss(envsubst, tmp.path(), &[], &env, Some(&doc)));
        }
    }
    let times = |runs: &[(Duration, u64)]| of_calls(runs.iter().map(|r| r.0));
    let peaks = |runs: &[(Duration, u64)]| of_calls(runs.iter().map(|r| Duration::from_nanos(r.1)));
    let (time, rss) = (times(&strata), peaks(&strata));
    if !other.is_empty() {
        let (peer_time, peer_rss) = (times(&other), peaks(&other));
        report.compare("env_text_10mb_bin", &time, "envsubst", &peer_time);
        report.compare("env_text_10mb_rss_bin", &rss, "envsubst", &peer_rss);
    }
    report.against("env_text_10mb_rss_target", &rss, "target", RSS_TARGET);
    report.note(&format!(
        "env_text: a {:.1} MB text renders in {:.0} ms with a peak of {:.1} MB",
        text.len() as f64 / 1e6,
        time.median_ns / 1e6,
        rss.median_ns / 1e6,
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_has_ten_placeholders_a_line() {
        let t = text(1000);
        assert!(t.len() >= 1000);
        for line in t.lines() {
            assert_eq!(line.matches("${VAR").count(), 10, "{line}");
        }
    }
}
