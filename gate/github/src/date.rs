//! The two time formats GitHub's API speaks: the HTTP `Date` header (IMF-fixdate, RFC 9110
//! §5.6.7, `Sun, 06 Nov 1994 08:49:37 GMT`) and RFC 3339 timestamps in JSON (`created_at`), read
//! and written by `jiff`.

use jiff::Timestamp;
use jiff::fmt::rfc2822::{DateTimeParser, DateTimePrinter};

/// The instants IMF-fixdate can write: years 0001 to 9999.
const IMF_FIXDATE_RANGE: std::ops::RangeInclusive<i64> = -62_135_596_800..=253_402_300_799;

/// Parse an IMF-fixdate into Unix seconds. The obsolete RFC 850 and asctime forms, and RFC 2822's
/// other spellings (a one-digit day, a numeric zone, no weekday, folded spaces), are refused: the
/// value must be exactly what `jiff` writes for the instant it reads.
pub fn parse_http_date(value: &str) -> Option<i64> {
    let at = DateTimeParser::new().parse_timestamp(value).ok()?;
    let canonical = DateTimePrinter::new()
        .timestamp_to_rfc9110_string(&at)
        .ok()?;
    (canonical == value).then(|| at.as_second())
}

/// Unix seconds as an IMF-fixdate; an instant outside years 0001 to 9999 is written as the nearest
/// one inside.
pub fn format_http_date(unix: i64) -> String {
    let unix = unix.clamp(*IMF_FIXDATE_RANGE.start(), *IMF_FIXDATE_RANGE.end());
    Timestamp::from_second(unix)
        .ok()
        .and_then(|at| DateTimePrinter::new().timestamp_to_rfc9110_string(&at).ok())
        .unwrap_or_default()
}

/// Unix seconds as an RFC 3339 timestamp in UTC (`2026-03-01T12:00:00Z`); an instant outside
/// `jiff`'s range (years -9999 to 9999) is written as the nearest one inside.
pub fn format_rfc3339(unix: i64) -> String {
    let unix = unix.clamp(Timestamp::MIN.as_second(), Timestamp::MAX.as_second());
    Timestamp::from_second(unix)
        .map(|at| at.to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_dates() {
        assert_eq!(
            parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777)
        );
        assert_eq!(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        for bad in [
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
            "Sun, 06 Nov 1994 08:49:37 UTC",
            "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 6 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 24:49:37 GMT",
            "Sun,  6 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 +0000",
            "06 Nov 1994 08:49:37 GMT",
            "Mon, 06 Nov 1994 08:49:37 GMT",
            "",
        ] {
            assert_eq!(parse_http_date(bad), None, "{bad}");
        }
        for unix in [0, 784_111_777, 1_772_366_400, 4_102_444_799] {
            assert_eq!(parse_http_date(&format_http_date(unix)), Some(unix));
        }
        assert_eq!(
            format_http_date(784_111_777),
            "Sun, 06 Nov 1994 08:49:37 GMT"
        );
    }

    #[test]
    fn rfc3339() {
        assert_eq!(format_rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_rfc3339(1_709_210_096), "2024-02-29T12:34:56Z");
        assert_eq!(format_rfc3339(-1), "1969-12-31T23:59:59Z");
        assert_eq!(format_rfc3339(i64::MAX), "9999-12-30T22:00:00Z");
        assert_eq!(format_http_date(i64::MIN), "Mon, 01 Jan 0001 00:00:00 GMT");
    }
}
