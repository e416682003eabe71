//! The output format: one line per comparison, and `#` lines for everything else.

use std::fmt;

use crate::harness::Measurement;

/// One comparison line: `<workload> strata_ns=<n> peer=<name> peer_ns=<n> ratio=<strata/peer>`.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The workload's name (no spaces).
    pub workload: String,
    /// Strata's median time, in nanoseconds.
    pub strata_ns: f64,
    /// What strata is compared with: a peer program (`minijinja`, `memchr`, `clone`,
    /// `copies`) or a budget (`target`, `linear`).
    pub peer: &'static str,
    /// The peer's median time, or the budget, in nanoseconds.
    pub peer_ns: f64,
}

impl Comparison {
    /// Strata's time divided by the peer's: below 1 means strata was faster.
    pub fn ratio(&self) -> f64 {
        self.strata_ns / self.peer_ns
    }
}

impl fmt::Display for Comparison {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} strata_ns={:.0} peer={} peer_ns={:.0} ratio={:.2}",
            self.workload,
            self.strata_ns,
            self.peer,
            self.peer_ns,
            self.ratio()
        )
    }
}

/// Where workloads send their results: printed at once, and kept for the caller.
#[derive(Debug, Default)]
pub struct Report {
    /// The comparisons printed so far, in order.
    pub comparisons: Vec<Comparison>,
    /// When true, each comparison is followed by a `#` line with the spread of the samples.
    pub verbose: bool,
    /// When true (smoke mode), comparisons and notes are kept but not printed: their figures
    /// come from a single call on reduced inputs and mean nothing. [`Report::skip`] lines are
    /// printed regardless.
    pub silent: bool,
}

impl Report {
    /// Prints and keeps a comparison with a measured peer.
    pub fn compare(
        &mut self,
        workload: &str,
        strata: &Measurement,
        peer: &'static str,
        peer_m: &Measurement,
    ) {
        self.line(workload, strata, peer, peer_m.median_ns);
        if self.verbose {
            self.note(&format!("  {peer}: {}", spread(peer_m)));
        }
    }

    /// Prints and keeps a comparison with a budget (a target time, an extrapolation).
    pub fn against(&mut self, workload: &str, strata: &Measurement, peer: &'static str, ns: f64) {
        self.line(workload, strata, peer, ns);
    }

    fn line(&mut self, workload: &str, strata: &Measurement, peer: &'static str, peer_ns: f64) {
        let line = Comparison {
            workload: workload.to_string(),
            strata_ns: strata.median_ns,
            peer,
            peer_ns,
        };
        if !self.silent {
            println!("{line}");
        }
        self.comparisons.push(line);
        if self.verbose {
            self.note(&format!("  strata: {}", spread(strata)));
        }
    }

    /// Prints an informational line, marked with `# ` so that parsers of the comparison lines
    /// can skip it.
    pub fn note(&mut self, text: &str) {
        if !self.silent {
            println!("# {text}");
        }
    }

    /// A self-check of a workload that failed without panicking (a run of the binary whose
    /// output was not the expected one): panics in smoke mode, where the self-checks are the
    /// point, so that the run fails naming the workload; a note otherwise.
    pub fn check_failed(&mut self, smoke: bool, text: &str) {
        assert!(!smoke, "{text}");
        self.note(text);
    }

    /// Prints a `#` line saying that part of a workload did not run and why (a peer program
    /// that is missing): printed in every mode, smoke mode included.
    pub fn skip(&mut self, text: &str) {
        println!("# {text}");
    }
}

/// The spread of a measurement: fastest and slowest sample, calls per sample.
fn spread(m: &Measurement) -> String {
    format!(
        "min {:.0} ns, median {:.0} ns, max {:.0} ns, {} calls per sample",
        m.min_ns, m.median_ns, m.max_ns, m.iters
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_has_the_documented_form() {
        let c = Comparison {
            workload: "context_render".into(),
            strata_ns: 123.4,
            peer: "minijinja",
            peer_ns: 246.8,
        };
        assert_eq!(
            c.to_string(),
            "context_render strata_ns=123 peer=minijinja peer_ns=247 ratio=0.50"
        );
    }
}
