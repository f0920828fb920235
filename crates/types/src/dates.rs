//! Calendar arithmetic for the timestamps DynamoDB prints and signs (stream
//! labels, SigV4 dates, X-Amz-Date checks), without a date-time dependency:
//! Howard Hinnant's days-from-civil algorithms over the proleptic Gregorian
//! calendar. The one home of date arithmetic in the workspace.

/// Days since 1970-01-01 to (year, month 1-12, day 1-31).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// (year, month 1-12, day 1-31) to days since 1970-01-01.
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let (month, day) = (i64::from(month), i64::from(day));
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Seconds since the epoch as `YYYY-MM-DDTHH:MM:SSZ` (UTC, whole seconds).
pub fn iso8601_utc(seconds: f64) -> String {
    let whole = seconds.floor() as i64;
    let (year, month, day) = civil_from_days(whole.div_euclid(86_400));
    let of_day = whole.rem_euclid(86_400);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60
    )
}

/// [`iso8601_utc`] with milliseconds: `YYYY-MM-DDTHH:MM:SS.fffZ`.
pub fn iso8601_utc_millis(seconds: f64) -> String {
    let millis = ((seconds * 1000.0).round() as i64).rem_euclid(1000);
    let whole = iso8601_utc((seconds * 1000.0).round() / 1000.0);
    format!("{}.{millis:03}Z", whole.trim_end_matches('Z'))
}

/// `YYYY-MM-DDTHH:MM:SS[.fff]Z` (UTC) as seconds since the epoch; None for
/// any other text.
pub fn parse_iso8601_utc(text: &str) -> Option<f64> {
    let text = text.strip_suffix('Z')?;
    let (date, time) = text.split_once('T')?;
    let mut date_parts = date.splitn(3, '-').map(str::parse::<i64>);
    let (year, month, day) = (
        date_parts.next()?.ok()?,
        date_parts.next()?.ok()?,
        date_parts.next()?.ok()?,
    );
    let (whole, fraction) = time.split_once('.').unwrap_or((time, ""));
    let mut time_parts = whole.splitn(3, ':').map(str::parse::<i64>);
    let (hour, minute, second) = (
        time_parts.next()?.ok()?,
        time_parts.next()?.ok()?,
        time_parts.next()?.ok()?,
    );
    let valid = (1..=12).contains(&month)
        && (1..=31).contains(&day)
        && hour < 24
        && minute < 60
        && second < 61;
    let fraction: f64 = match fraction {
        "" => 0.0,
        digits if digits.bytes().all(|b| b.is_ascii_digit()) => {
            format!("0.{digits}").parse().ok()?
        }
        _ => return None,
    };
    let days = days_from_civil(year, month as u32, day as u32);
    valid.then(|| (days * 86_400 + hour * 3600 + minute * 60 + second) as f64 + fraction)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso8601_reads_back_what_it_prints() {
        assert_eq!(
            parse_iso8601_utc("2024-12-04T08:13:20Z"),
            Some(1_733_300_000.0)
        );
        assert_eq!(
            parse_iso8601_utc("2024-12-04T08:13:20.250Z"),
            Some(1_733_300_000.25)
        );
        assert_eq!(
            iso8601_utc_millis(1_733_300_000.25),
            "2024-12-04T08:13:20.250Z"
        );
        for bad in [
            "2024-12-04",
            "2024-13-04T00:00:00Z",
            "2024-12-04T08:13:20",
            "x",
        ] {
            assert_eq!(parse_iso8601_utc(bad), None, "{bad}");
        }
    }

    #[test]
    fn iso8601_prints_utc_seconds() {
        assert_eq!(iso8601_utc(0.0), "1970-01-01T00:00:00Z");
        assert_eq!(iso8601_utc(1_733_300_000.9), "2024-12-04T08:13:20Z");
    }

    #[test]
    fn round_trips() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_000), (2024, 10, 4));
        for days in [-1000, 0, 59, 60, 365, 11_016, 20_787] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }
}
