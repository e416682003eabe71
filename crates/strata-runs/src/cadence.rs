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

/// What [`CheckpointEvery::parse`] accepts, for help texts and messages: the duration is
/// the one grammar of [`strata_core::parse_duration`] ([`strata_core::DURATION_FORMS`]).
pub const CHECKPOINT_EVERY_FORMS: &str = "a number of steps greater than 0 (100), or a duration \
     greater than 0 and at most a week: a number and a unit, ms, s, m, h, d or w (500ms, 30s, \
     1.5s, 5m, 2h, 7d, 1w)";

/// The longest checkpoint interval: a week.
pub const MAX_INTERVAL: Duration = Duration::from_secs(7 * 24 * 3600);

impl CheckpointEvery {
    /// Reads a number of steps (a bare number greater than 0: `100`) or an interval (a
    /// duration greater than 0 and at most a week, in the one grammar of
    /// [`strata_core::parse_duration`]: `500ms`, `2s`, `1.5s`, `5m`, `1h`, `1w`), with spaces
    /// around it ignored. The message of an error quotes the text and says what is wrong:
    ///
    /// * `` `0` is not a number of steps: it must be greater than 0 ``;
    /// * `` `0s` is not a checkpoint interval: it must be greater than 0 ``;
    /// * `` `8d` is not a checkpoint interval: it must be at most a week (1w) ``;
    /// * the grammar's own (`` `soon` is not a duration: write a number and a unit, … ``).
    pub fn parse(text: &str) -> Result<CheckpointEvery, String> {
        let text = text.trim();
        if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
            let steps: u64 = text.parse().map_err(|_| {
                format!(
                    "`{}` is too many steps: at most {}",
                    strata_core::shown(text),
                    u64::MAX
                )
            })?;
            return match steps {
                0 => Err(format!(
                    "`{}` is not a number of steps: it must be greater than 0",
                    strata_core::shown(text)
                )),
                n => Ok(CheckpointEvery::Steps(n)),
            };
        }
        let interval = strata_core::parse_duration(text)?;
        let not = |why: &str| {
            format!(
                "`{}` is not a checkpoint interval: it must be {why}",
                strata_core::shown(text)
            )
        };
        if interval.is_zero() {
            return Err(not("greater than 0"));
        }
        if interval > MAX_INTERVAL {
            return Err(not("at most a week (1w)"));
        }
        Ok(CheckpointEvery::Interval(interval))
    }

    /// True for the default: a durable checkpoint after every step.
    pub fn every_step(self) -> bool {
        self == CheckpointEvery::Steps(1)
    }
}

impl fmt::Display for CheckpointEvery {
    /// `100` for steps; an interval in the grammar it is read in (`500ms`, `1.5s`, `5m`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckpointEvery::Steps(n) => write!(f, "{n}"),
            CheckpointEvery::Interval(d) => f.write_str(&strata_core::duration_text(*d)),
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
    fn steps_and_durations_are_read_and_shown_back() {
        let every = |ms| CheckpointEvery::Interval(Duration::from_millis(ms));
        for (text, every, shown) in [
            ("1", CheckpointEvery::Steps(1), "1"),
            (" 100 ", CheckpointEvery::Steps(100), "100"),
            ("0100", CheckpointEvery::Steps(100), "100"),
            ("500ms", every(500), "500ms"),
            ("2s", every(2_000), "2s"),
            ("1.5s", every(1_500), "1.5s"),
            ("1m", every(60_000), "1m"),
            ("90s", every(90_000), "90s"),
            ("0.5h", every(1_800_000), "30m"),
            ("2h", every(7_200_000), "2h"),
            ("1d", every(86_400_000), "1d"),
            ("7d", every(604_800_000), "1w"),
            ("1w", every(604_800_000), "1w"),
            ("604800s", every(604_800_000), "1w"),
            ("1ms", every(1), "1ms"),
        ] {
            assert_eq!(CheckpointEvery::parse(text), Ok(every), "{text}");
            assert_eq!(every.to_string(), shown);
            assert_eq!(CheckpointEvery::parse(shown), Ok(every), "{shown}");
        }
        assert!(CheckpointEvery::default().every_step());
    }

    #[test]
    fn out_of_range_steps_and_intervals_are_refused_with_their_range() {
        let not_duration = |t: &str| {
            Err(format!(
                "`{t}` is not a duration: write a number and a unit, ms, s, m, h, d or w (500ms, 30s, 1.5s, 5m, 2h, 7d, 1w)"
            ))
        };
        for (text, message) in [
            (
                "0",
                Err("`0` is not a number of steps: it must be greater than 0".to_string()),
            ),
            (
                "000",
                Err("`000` is not a number of steps: it must be greater than 0".into()),
            ),
            (
                "99999999999999999999",
                Err(
                    "`99999999999999999999` is too many steps: at most 18446744073709551615".into(),
                ),
            ),
            (
                "0s",
                Err("`0s` is not a checkpoint interval: it must be greater than 0".into()),
            ),
            (
                "0ms",
                Err("`0ms` is not a checkpoint interval: it must be greater than 0".into()),
            ),
            (
                "604801s",
                Err(
                    "`604801s` is not a checkpoint interval: it must be at most a week (1w)".into(),
                ),
            ),
            (
                "8d",
                Err("`8d` is not a checkpoint interval: it must be at most a week (1w)".into()),
            ),
            ("0.5ms", Err("`0.5ms` is finer than a millisecond".into())),
            ("", not_duration("")),
            ("-1", not_duration("-1")),
            ("1.5", not_duration("1.5")),
            ("-1s", not_duration("-1s")),
            ("1e3s", not_duration("1e3s")),
            ("inf", not_duration("inf")),
            ("1 step", not_duration("1 step")),
            ("s", not_duration("s")),
        ] {
            assert_eq!(CheckpointEvery::parse(text), message, "{text:?}");
        }
    }

    #[test]
    fn the_forms_name_the_one_duration_grammar() {
        assert!(CHECKPOINT_EVERY_FORMS.ends_with(strata_core::DURATION_FORMS));
        assert_eq!(strata_core::parse_duration("1w"), Ok(MAX_INTERVAL));
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
