//! The one grammar of a duration written as text — every option, setting and environment
//! variable that takes one (`--checkpoint-every`, `checkpoint_every`,
//! `STRATA_CHECKPOINT_EVERY`, `strata runs prune --older-than`) reads it with
//! [`parse_duration`]:
//!
//! ```text
//! duration = number unit
//! number   = digits [ "." digits ]        (1, 30, 1.5, 0.25: no sign, no exponent)
//! unit     = "ms" | "s" | "m" | "h" | "d" | "w"
//! ```
//!
//! Spaces around the whole are ignored, none is allowed inside (`5 m`). A duration is counted
//! in whole milliseconds: a decimal is allowed in every unit as long as it comes to whole
//! milliseconds (`1.5s`, `0.5m`, `1.25ms` is not). The grammar allows 0; each option checks its
//! own range (a checkpoint interval is greater than 0 and at most a week, a prune age any).

use std::time::Duration;

use crate::shown;

/// What [`parse_duration`] reads, for help texts and messages.
pub const DURATION_FORMS: &str =
    "a number and a unit, ms, s, m, h, d or w (500ms, 30s, 1.5s, 5m, 2h, 7d, 1w)";

/// The units, longest first, each with its length in milliseconds.
const UNITS: [(&str, u64); 6] = [
    ("w", 604_800_000),
    ("d", 86_400_000),
    ("h", 3_600_000),
    ("m", 60_000),
    ("s", 1_000),
    ("ms", 1),
];

/// Reads a duration: a number (digits, with an optional decimal part) and a unit, `ms`, `s`,
/// `m`, `h`, `d` or `w` — `500ms`, `30s`, `1.5s`, `5m`, `2h`, `7d`, `1w` — with spaces around
/// it ignored. The message of an error quotes the text and says what is wrong with it:
///
/// * `` `7` is not a duration: write a number and a unit, ms, s, m, h, d or w (500ms, 30s, 1.5s, 5m, 2h, 7d, 1w) ``
///   (also for an empty text, a sign, an exponent, a space inside, an unknown unit);
/// * `` `0.5ms` is finer than a millisecond ``;
/// * `` `99999999999w` is too long: a duration is at most 584542046 years ``.
///
/// 0 is a duration (`0s`): the caller checks the range its option allows.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let not = || {
        format!(
            "`{}` is not a duration: write {DURATION_FORMS}",
            shown(text)
        )
    };
    let number_end = text
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(number_end);
    let scale = UNITS
        .iter()
        .find(|(name, _)| *name == unit)
        .map(|(_, ms)| *ms)
        .ok_or_else(not)?;
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || (number.contains('.') && !digits(fraction)) {
        return Err(not());
    }
    let too_long = || {
        format!(
            "`{}` is too long: a duration is at most {} years",
            shown(text),
            u64::MAX / 1_000 / 31_557_600
        )
    };
    let mut ms: u64 = 0;
    for b in whole.bytes() {
        ms = ms
            .checked_mul(10)
            .and_then(|n| n.checked_add(u64::from(b - b'0')))
            .ok_or_else(too_long)?;
    }
    ms = ms.checked_mul(scale).ok_or_else(too_long)?;
    // The decimal part, exactly: `scale × fraction / 10^len` must be whole milliseconds.
    // Trailing zeros change nothing; past 18 significant digits it cannot be whole (no unit
    // has more than 10 factors of 2 or 5), and 18 digits keep the product within a u128.
    let fraction = fraction.trim_end_matches('0');
    if !fraction.is_empty() {
        let finer = || format!("`{}` is finer than a millisecond", shown(text));
        if fraction.len() > 18 {
            return Err(finer());
        }
        let numerator = u128::from(scale) * fraction.parse::<u128>().map_err(|_| not())?;
        let denominator = 10u128.pow(fraction.len() as u32);
        let (part, rest) = (numerator / denominator, numerator % denominator);
        if rest > 0 {
            return Err(finer());
        }
        let part = u64::try_from(part).map_err(|_| too_long())?;
        ms = ms.checked_add(part).ok_or_else(too_long)?;
    }
    Ok(Duration::from_millis(ms))
}

/// A duration as [`parse_duration`] reads it back, in its longest exact unit: `1w`, `2h`,
/// `90s`, `1.5s`, `250ms`, `0s`. A duration finer than a millisecond (which the grammar never
/// makes) is shown in seconds with its decimals (`0.0000015s`), which it cannot read.
pub fn duration_text(duration: Duration) -> String {
    if duration.is_zero() {
        return "0s".to_string();
    }
    let sub_ms = duration.subsec_nanos() % 1_000_000;
    if sub_ms > 0 {
        return format!("{}s", duration.as_secs_f64());
    }
    let ms = duration.as_millis();
    for (unit, scale) in UNITS {
        let (count, rest) = (ms / u128::from(scale), ms % u128::from(scale));
        if rest == 0 && (scale > 1 || ms < 1_000) {
            return format!("{count}{unit}");
        }
    }
    let fraction = format!("{:03}", ms % 1_000);
    format!("{}.{}s", ms / 1_000, fraction.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Result<Duration, String> {
        Ok(Duration::from_millis(n))
    }

    fn not(text: &str) -> Result<Duration, String> {
        Err(format!(
            "`{text}` is not a duration: write a number and a unit, ms, s, m, h, d or w (500ms, 30s, 1.5s, 5m, 2h, 7d, 1w)"
        ))
    }

    #[test]
    fn every_unit_is_read() {
        assert_eq!(parse_duration("500ms"), ms(500));
        assert_eq!(parse_duration("30s"), ms(30_000));
        assert_eq!(parse_duration("5m"), ms(300_000));
        assert_eq!(parse_duration("2h"), ms(7_200_000));
        assert_eq!(parse_duration("7d"), ms(604_800_000));
        assert_eq!(parse_duration("1w"), ms(604_800_000));
        assert_eq!(parse_duration("1ms"), ms(1));
        assert_eq!(parse_duration("007s"), ms(7_000));
    }

    #[test]
    fn decimals_are_read_when_they_come_to_whole_milliseconds() {
        assert_eq!(parse_duration("1.5s"), ms(1_500));
        assert_eq!(parse_duration("0.5m"), ms(30_000));
        assert_eq!(parse_duration("1.25h"), ms(4_500_000));
        assert_eq!(parse_duration("0.001s"), ms(1));
        assert_eq!(parse_duration("2.0ms"), ms(2));
        assert_eq!(parse_duration("1.50000000000000000000000000s"), ms(1_500));
        assert_eq!(parse_duration("0.5w"), ms(302_400_000));
        for finer in ["0.5ms", "1.0005s", "0.0000001w", "1.0000000000000000001s"] {
            assert_eq!(
                parse_duration(finer),
                Err(format!("`{finer}` is finer than a millisecond")),
                "{finer}"
            );
        }
    }

    #[test]
    fn zero_is_a_duration_the_caller_may_refuse() {
        for zero in ["0s", "0ms", "0w", "0.0s", "000m"] {
            assert_eq!(parse_duration(zero), ms(0), "{zero}");
        }
    }

    #[test]
    fn spaces_around_are_ignored_and_inside_refused() {
        assert_eq!(parse_duration("  5m "), ms(300_000));
        assert_eq!(parse_duration("\t2h\n"), ms(7_200_000));
        assert_eq!(parse_duration("5 m"), not("5 m"));
        assert_eq!(parse_duration("1 .5s"), not("1 .5s"));
        assert_eq!(
            parse_duration("   "),
            Err("`` is not a duration: write a number and a unit, ms, s, m, h, d or w (500ms, 30s, 1.5s, 5m, 2h, 7d, 1w)".into())
        );
    }

    #[test]
    fn anything_else_is_not_a_duration() {
        for junk in [
            "", "7", "1.5", "s", "ms", "m5", "-1s", "+1s", "-0s", "1e3s", "1.s", ".5s", "1..5s",
            "1.2.3s", "5M", "5S", "5sec", "5min", "1y", "1mo", "5us", "1h30m", "inf", "nans",
            "soon", "0x10s", "١s", "5m\u{1b}",
        ] {
            let quoted = shown(junk.trim());
            assert_eq!(
                parse_duration(junk),
                Err(format!(
                    "`{quoted}` is not a duration: write {DURATION_FORMS}"
                )),
                "{junk:?}"
            );
        }
        assert_eq!(parse_duration("-1s"), not("-1s"));
        assert_eq!(parse_duration("1h30m"), not("1h30m"));
        assert_eq!(parse_duration("5m\u{1b}"), not("5m\\u{1b}"));
        let long = "9".repeat(100);
        assert_eq!(
            parse_duration(&format!("{long}x")).unwrap_err(),
            format!(
                "`{}…` is not a duration: write {DURATION_FORMS}",
                "9".repeat(64)
            )
        );
    }

    #[test]
    fn too_long_is_an_error_not_a_wrap() {
        let too_long = |t: &str| {
            Err(format!(
                "`{t}` is too long: a duration is at most 584542046 years"
            ))
        };
        assert_eq!(parse_duration("18446744073709551615ms"), ms(u64::MAX));
        assert_eq!(
            parse_duration("18446744073709551616ms"),
            too_long("18446744073709551616ms")
        );
        assert_eq!(parse_duration("99999999999w"), too_long("99999999999w"));
        assert_eq!(
            parse_duration("99999999999999999999999999999s"),
            too_long("99999999999999999999999999999s")
        );
        assert_eq!(
            parse_duration("18446744073709551.999s"),
            too_long("18446744073709551.999s")
        );
    }

    #[test]
    fn durations_are_shown_in_their_longest_exact_unit_and_read_back() {
        for (text, shown) in [
            ("1w", "1w"),
            ("7d", "1w"),
            ("2d", "2d"),
            ("2h", "2h"),
            ("90m", "90m"),
            ("60s", "1m"),
            ("2s", "2s"),
            ("1.5s", "1.5s"),
            ("1.25s", "1.25s"),
            ("61.001s", "61.001s"),
            ("1000ms", "1s"),
            ("500ms", "500ms"),
            ("0s", "0s"),
        ] {
            let d = parse_duration(text).unwrap();
            assert_eq!(duration_text(d), shown, "{text}");
            assert_eq!(parse_duration(shown), Ok(d), "{shown}");
        }
        assert_eq!(duration_text(Duration::from_nanos(1_500)), "0.0000015s");
    }
}
