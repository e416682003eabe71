//! How often a run's checkpoint is made durable: after every step (the default, crash-safe),
//! after every `n` steps, or once a time interval has passed since the last one. Between
//! durable checkpoints nothing is written, so a run killed there resumes from the last one
//! and runs again at most the steps taken since.

use std::fmt;
use std::time::{Duration, Instant};

/// How often a run writes its checkpoint (each write is synced to disk).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckpointEvery {
    /// After every `n` steps (`1`, the default: after every step).
    Steps(u64),
    /// After the first step that ends at least this long after the last checkpoint.
    Interval(Duration),
}

impl Default for CheckpointEvery {
    fn default() -> CheckpointEvery {
        CheckpointEvery::Steps(1)
    }
}

/// What [`CheckpointEvery::parse`] accepts, for messages.
pub const CHECKPOINT_EVERY_FORMS: &str =
    "a number of steps greater than 0 (100), or a time up to a week (500ms, 2s, 1.5s)";

impl CheckpointEvery {
    /// Reads `100` (steps), `500ms` or `2s` (a time greater than 0 and at most a week, by
    /// the one rule for durations, [`strata_core::seconds`]); `None` for anything else.
    pub fn parse(text: &str) -> Option<CheckpointEvery> {
        let text = text.trim();
        if let Some(ms) = text.strip_suffix("ms") {
            return time(ms, 1e-3);
        }
        if let Some(s) = text.strip_suffix('s') {
            return time(s, 1.0);
        }
        let steps: u64 = text.parse().ok()?;
        (steps > 0).then_some(CheckpointEvery::Steps(steps))
    }

    /// True for the default: a durable checkpoint after every step.
    pub fn every_step(self) -> bool {
        self == CheckpointEvery::Steps(1)
    }
}

/// `number × unit` seconds as an interval, when the number is plain (digits and a point).
fn time(number: &str, unit: f64) -> Option<CheckpointEvery> {
    let plain = !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    let secs: f64 = number.parse().ok().filter(|_| plain)?;
    strata_core::seconds(secs * unit).map(CheckpointEvery::Interval)
}

impl fmt::Display for CheckpointEvery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckpointEvery::Steps(n) => write!(f, "{n}"),
            CheckpointEvery::Interval(d)
                if d.subsec_nanos() % 1_000_000 == 0 && d.as_secs() == 0 =>
            {
                write!(f, "{}ms", d.as_millis())
            }
            CheckpointEvery::Interval(d) => write!(f, "{}s", d.as_secs_f64()),
        }
    }
}

/// Counts the steps and time since the last checkpoint of a run, and says when the next is due.
#[derive(Debug, Clone)]
pub struct Cadence {
    every: CheckpointEvery,
    steps: u64,
    last: Instant,
}

impl Cadence {
    /// A cadence starting now, as if a checkpoint had just been written.
    pub fn new(every: CheckpointEvery) -> Cadence {
        Cadence {
            every,
            steps: 0,
            last: Instant::now(),
        }
    }

    /// Counts one step; true when a checkpoint is due after it (then call [`Cadence::saved`]).
    pub fn step(&mut self) -> bool {
        self.steps += 1;
        match self.every {
            CheckpointEvery::Steps(n) => self.steps >= n,
            CheckpointEvery::Interval(d) => self.last.elapsed() >= d,
        }
    }

    /// Records that a checkpoint was just written.
    pub fn saved(&mut self) {
        self.steps = 0;
        self.last = Instant::now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_and_times_are_read_and_shown_back() {
        for (text, every, shown) in [
            ("1", CheckpointEvery::Steps(1), "1"),
            (" 100 ", CheckpointEvery::Steps(100), "100"),
            (
                "500ms",
                CheckpointEvery::Interval(Duration::from_millis(500)),
                "500ms",
            ),
            (
                "2s",
                CheckpointEvery::Interval(Duration::from_secs(2)),
                "2s",
            ),
            (
                "1.5s",
                CheckpointEvery::Interval(Duration::from_millis(1500)),
                "1.5s",
            ),
        ] {
            assert_eq!(CheckpointEvery::parse(text), Some(every), "{text}");
            assert_eq!(every.to_string(), shown);
        }
        for bad in [
            "", "0", "-1", "0s", "0ms", "s", "ms", "1e3s", "inf", "nans", "-1s", "1h", "1 step",
            "604801s",
        ] {
            assert_eq!(CheckpointEvery::parse(bad), None, "{bad:?}");
        }
        assert!(CheckpointEvery::default().every_step());
    }

    #[test]
    fn a_checkpoint_is_due_every_n_steps() {
        let mut c = Cadence::new(CheckpointEvery::Steps(3));
        let due: Vec<bool> = (0..7)
            .map(|_| {
                let due = c.step();
                if due {
                    c.saved();
                }
                due
            })
            .collect();
        assert_eq!(due, [false, false, true, false, false, true, false]);
        let mut every = Cadence::new(CheckpointEvery::default());
        assert!(every.step());
    }

    #[test]
    fn a_checkpoint_is_due_once_the_interval_has_passed() {
        let mut hourly = Cadence::new(CheckpointEvery::Interval(Duration::from_secs(3600)));
        assert!(!hourly.step());
        let mut c = Cadence::new(CheckpointEvery::Interval(Duration::from_millis(1)));
        std::thread::sleep(Duration::from_millis(2));
        assert!(c.step());
        c.saved();
        c.every = CheckpointEvery::Interval(Duration::from_secs(3600));
        assert!(!c.step());
    }
}
