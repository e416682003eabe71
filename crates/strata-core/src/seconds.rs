//! The one rule for a duration read from a file or a parameter as a number of seconds: greater
//! than 0 and at most a week (a tool's `timeout`, a directive's `limits.timeout`). A duration
//! written as text with a unit (`500ms`, `5m`, `7d`) is read by [`crate::parse_duration`].

use std::time::Duration;

/// The longest duration accepted, in seconds (one week).
pub const MAX_SECONDS: f64 = 7.0 * 24.0 * 3600.0;

/// `secs` seconds as a duration, when it is a finite number greater than 0 and at most
/// [`MAX_SECONDS`]; `None` otherwise (never a panic, whatever the number).
pub fn seconds(secs: f64) -> Option<Duration> {
    (secs.is_finite() && secs > 0.0 && secs <= MAX_SECONDS).then(|| Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_positive_finite_numbers_up_to_a_week_are_durations() {
        assert_eq!(seconds(1.5), Some(Duration::from_millis(1500)));
        assert_eq!(seconds(MAX_SECONDS), Some(Duration::from_secs(604_800)));
        for bad in [
            0.0,
            -0.0,
            -1.0,
            1e20,
            MAX_SECONDS + 1.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            assert_eq!(seconds(bad), None, "{bad}");
        }
    }
}
