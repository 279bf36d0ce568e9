//! ISO 8601 helpers for timers: durations (`timeDuration`), date-times (`timeDate`) and repeating
//! intervals or cron expressions (`timeCycle`). Pure functions: no clock, no I/O. Every parser accepts surrounding
//! whitespace (model text often has it) and never panics.
//!
//! Durations follow Java's `Period` + `Duration` split that Zeebe uses (`PnYnMnWnDTnHnMnS`): the
//! date part (years, months, weeks, days) is calendar based, the time part is exact. Two ways to
//! turn one into milliseconds:
//! - [`IsoDuration::add_to`] is calendar aware (UTC): `P1M` from Jan 31 ends on Feb 28/29, like
//!   Java's `ZonedDateTime.plus(Period)` in UTC. Use it to compute due dates.
//! - [`parse_duration`] / [`IsoDuration::approx_millis`] are calendar unaware: a day is 24 h, a
//!   month 30 days, a year 365 days. Exact for everything without years or months (the common
//!   case: `PT1M`, `P2D`, `PT0.5S`).

use chrono::{DateTime, Days, Months, NaiveDate, NaiveTime, Utc};

const MILLIS_PER_SECOND: i64 = 1_000;
const MILLIS_PER_MINUTE: i64 = 60 * MILLIS_PER_SECOND;
const MILLIS_PER_HOUR: i64 = 60 * MILLIS_PER_MINUTE;
const MILLIS_PER_DAY: i64 = 24 * MILLIS_PER_HOUR;

fn duration_too_large() -> String {
    "duration is too large".to_string()
}

/// A parsed ISO 8601 duration. Components keep their sign (Java allows `P-1DT2H`); a leading `-`
/// negates every component. Weeks are folded into `days`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IsoDuration {
    pub years: i64,
    pub months: i64,
    pub days: i64,
    /// The time part (`T...`), exact, truncated to milliseconds.
    pub millis: i64,
}

impl IsoDuration {
    /// Calendar-unaware length: day = 24 h, month = 30 days, year = 365 days.
    pub fn approx_millis(&self) -> Result<i64, String> {
        let overflow = duration_too_large;
        let days = self
            .years
            .checked_mul(365)
            .and_then(|y| self.months.checked_mul(30).and_then(|m| y.checked_add(m)))
            .and_then(|d| d.checked_add(self.days))
            .ok_or_else(overflow)?;
        days.checked_mul(MILLIS_PER_DAY)
            .and_then(|d| d.checked_add(self.millis))
            .ok_or_else(overflow)
    }

    /// Adds the duration to `epoch_millis`, calendar aware in UTC: first years and months (the day
    /// of month is clamped to the month's length), then days, then the exact time part.
    pub fn add_to(&self, epoch_millis: i64) -> Result<i64, String> {
        let overflow = || "date-time out of range".to_string();
        let mut dt: DateTime<Utc> =
            DateTime::from_timestamp_millis(epoch_millis).ok_or_else(overflow)?;
        let months = self
            .years
            .checked_mul(12)
            .and_then(|y| y.checked_add(self.months))
            .ok_or_else(overflow)?;
        if months != 0 {
            let m = u32::try_from(months.unsigned_abs()).map_err(|_| overflow())?;
            dt = if months > 0 {
                dt.checked_add_months(Months::new(m))
            } else {
                dt.checked_sub_months(Months::new(m))
            }
            .ok_or_else(overflow)?;
        }
        if self.days != 0 {
            let d = Days::new(self.days.unsigned_abs());
            dt = if self.days > 0 {
                dt.checked_add_days(d)
            } else {
                dt.checked_sub_days(d)
            }
            .ok_or_else(overflow)?;
        }
        dt.timestamp_millis()
            .checked_add(self.millis)
            .ok_or_else(overflow)
    }
}

/// Parses an ISO 8601 duration into milliseconds, calendar unaware (see the module docs): `PT1M`,
/// `P2D`, `PT0.5S`, `P1DT12H`, `-PT5S` (negative results are returned as is; callers clamp).
pub fn parse_duration(s: &str) -> Result<i64, String> {
    parse_iso_duration(s)?.approx_millis()
}

/// Parses an ISO 8601 duration `[+-]P[nY][nM][nW][nD][T[nH][nM][n[.f]S]]` (case-insensitive,
/// components may be signed, fractional seconds with `.` or `,`, up to 9 digits).
pub fn parse_iso_duration(s: &str) -> Result<IsoDuration, String> {
    let b = s.trim().as_bytes();
    let (negate, mut i) = sign(b, 0);
    if !matches!(b.get(i), Some(b'P' | b'p')) {
        return Err("a duration must start with 'P' (e.g. 'PT1M', 'P2D')".into());
    }
    i += 1;
    let mut d = IsoDuration::default();
    let mut components = 0;

    // Date part: Y, M, W, D in this order.
    let mut last_rank = 0;
    while i < b.len() && !matches!(b[i], b'T' | b't') {
        let (value, frac, next) = number(b, i)?;
        if frac.is_some() {
            return Err("only seconds may have a fraction".into());
        }
        let Some(&unit) = b.get(next) else {
            return Err("missing unit after number".into());
        };
        let rank = match unit.to_ascii_uppercase() {
            b'Y' => 1,
            b'M' => 2,
            b'W' => 3,
            b'D' => 4,
            _ => return Err(format!("unexpected character '{}'", unit as char)),
        };
        if rank <= last_rank {
            return Err("duration components out of order (expected Y, M, W, D)".into());
        }
        last_rank = rank;
        let overflow = duration_too_large;
        match rank {
            1 => d.years = value,
            2 => d.months = value,
            3 => {
                d.days = d
                    .days
                    .checked_add(value.checked_mul(7).ok_or_else(overflow)?)
                    .ok_or_else(overflow)?
            }
            _ => d.days = d.days.checked_add(value).ok_or_else(overflow)?,
        }
        components += 1;
        i = next + 1;
    }

    // Time part: H, M, S in this order.
    if i < b.len() {
        i += 1; // 'T'
        if i >= b.len() {
            return Err("'T' must be followed by at least one time component".into());
        }
        let mut last_rank = 0;
        while i < b.len() {
            let (value, frac, next) = number(b, i)?;
            let Some(&unit) = b.get(next) else {
                return Err("missing unit after number".into());
            };
            let (rank, unit_millis) = match unit.to_ascii_uppercase() {
                b'H' => (1, MILLIS_PER_HOUR),
                b'M' => (2, MILLIS_PER_MINUTE),
                b'S' => (3, MILLIS_PER_SECOND),
                _ => return Err(format!("unexpected character '{}'", unit as char)),
            };
            if rank <= last_rank {
                return Err("duration components out of order (expected H, M, S)".into());
            }
            if frac.is_some() && rank != 3 {
                return Err("only seconds may have a fraction".into());
            }
            last_rank = rank;
            let overflow = duration_too_large;
            let mut ms = value.checked_mul(unit_millis).ok_or_else(overflow)?;
            if let Some(frac_ms) = frac {
                ms = ms.checked_add(frac_ms).ok_or_else(overflow)?;
            }
            d.millis = d.millis.checked_add(ms).ok_or_else(overflow)?;
            components += 1;
            i = next + 1;
        }
    }

    if components == 0 {
        return Err("a duration needs at least one component (e.g. 'PT1M')".into());
    }
    if negate {
        // Components may be negative already; `i64::MIN` has no positive counterpart.
        let neg = |v: i64| v.checked_neg().ok_or_else(duration_too_large);
        d = IsoDuration {
            years: neg(d.years)?,
            months: neg(d.months)?,
            days: neg(d.days)?,
            millis: neg(d.millis)?,
        };
    }
    Ok(d)
}

/// Reads an optional `+` or `-` at `i`: whether it is `-`, and the index after it.
fn sign(b: &[u8], i: usize) -> (bool, usize) {
    match b.get(i) {
        Some(b'-') => (true, i + 1),
        Some(b'+') => (false, i + 1),
        _ => (false, i),
    }
}

/// Reads `[+-]digits[(.|,)digits]` at `start`. Returns the integer value, the fraction as signed
/// milliseconds (truncated) if present, and the index after the number.
fn number(b: &[u8], start: usize) -> Result<(i64, Option<i64>, usize), String> {
    let (negative, mut i) = sign(b, start);
    let digits_start = i;
    let mut value: i64 = 0;
    while let Some(c) = b.get(i).filter(|c| c.is_ascii_digit()) {
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(i64::from(c - b'0')))
            .ok_or_else(|| "number is too large".to_string())?;
        i += 1;
    }
    if i == digits_start {
        return Err(match b.get(i) {
            Some(&c) if c.is_ascii() => format!("expected a number but found '{}'", c as char),
            Some(_) => "expected a number".to_string(),
            None => "expected a number but the text ended".to_string(),
        });
    }
    let mut frac = None;
    if matches!(b.get(i), Some(b'.' | b',')) {
        i += 1;
        let frac_start = i;
        let mut ms: i64 = 0;
        while let Some(c) = b.get(i).filter(|c| c.is_ascii_digit()) {
            let pos = i - frac_start;
            if pos >= 9 {
                return Err("at most 9 fraction digits are allowed".into());
            }
            if pos < 3 {
                ms = ms * 10 + i64::from(c - b'0');
            }
            i += 1;
        }
        let n = i - frac_start;
        if n == 0 {
            return Err("expected digits after the decimal separator".into());
        }
        for _ in n..3 {
            ms *= 10;
        }
        frac = Some(if negative { -ms } else { ms });
    }
    Ok((if negative { -value } else { value }, frac, i))
}

/// Parses an ISO 8601 date-time into epoch milliseconds: `2024-01-01T10:00:00Z`,
/// `2024-01-01T10:00:00.123+01:00`, `2024-01-01T10:00+0100`,
/// `2024-01-01T10:00:00+01:00[Europe/Berlin]` (the bracketed zone id is dropped; the offset is
/// authoritative). Without an offset the time is taken as UTC. A zone id without an offset is
/// only accepted for UTC zones (`[UTC]`, `[Z]`, `[GMT]`, `[Etc/UTC]`, ...): there is no time
/// zone database here.
pub fn parse_date_time(s: &str) -> Result<i64, String> {
    let t = s.trim();
    let (body, zone) = match t.find('[') {
        Some(open) => {
            let rest = &t[open + 1..];
            let Some(inner) = rest.strip_suffix(']') else {
                return Err("unterminated zone id: expected ']' at the end".into());
            };
            if inner.is_empty() || inner.contains(['[', ']']) {
                return Err("invalid zone id".into());
            }
            (&t[..open], Some(inner))
        }
        None => (t, None),
    };
    let b = body.as_bytes();
    let Some(t_pos) = b.iter().position(|c| matches!(c, b'T' | b't')) else {
        return Err(
            "expected a date and a time separated by 'T' (e.g. '2024-01-01T10:00:00Z')".into(),
        );
    };
    let date = parse_date(&body[..t_pos])?;
    let time_and_offset = &body[t_pos + 1..];
    // The offset starts at the first 'Z', '+' or '-' after the time.
    let off_pos = time_and_offset.find(['Z', 'z', '+', '-']);
    let (time_text, offset_text) = match off_pos {
        Some(p) => (&time_and_offset[..p], Some(&time_and_offset[p..])),
        None => (time_and_offset, None),
    };
    let time = parse_time(time_text)?;
    let offset_secs = match offset_text {
        Some(o) => parse_offset(o)?,
        None => match zone {
            None => 0,
            Some(z) if is_utc_zone(z) => 0,
            Some(z) => {
                return Err(format!(
                    "zone id '{z}' without an offset is not supported; write the offset (e.g. '+01:00[{z}]')"
                ))
            }
        },
    };
    let naive = date.and_time(time);
    naive
        .and_utc()
        .timestamp_millis()
        .checked_sub(offset_secs * 1000)
        .ok_or_else(|| "date-time out of range".to_string())
}

fn is_utc_zone(z: &str) -> bool {
    matches!(
        z.to_ascii_uppercase().as_str(),
        "Z" | "UTC"
            | "GMT"
            | "UT"
            | "ETC/UTC"
            | "ETC/GMT"
            | "ETC/UCT"
            | "UCT"
            | "ETC/ZULU"
            | "ZULU"
    )
}

fn all_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit())
}

fn parse_date(s: &str) -> Result<NaiveDate, String> {
    let bad = || format!("invalid date '{s}': expected YYYY-MM-DD");
    // Years beyond 9999 carry a sign in ISO 8601 (`+10000-01-01`).
    let (sign, rest) = match s.as_bytes().first() {
        Some(b'+') => (1, &s[1..]),
        Some(b'-') => (-1, &s[1..]),
        _ => (1, s),
    };
    let mut parts = rest.split('-');
    let (Some(y), Some(m), Some(d), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad());
    };
    if !all_digits(y) || y.len() < 4 || y.len() > 6 || !all_digits(m) || m.len() != 2 {
        return Err(bad());
    }
    if !all_digits(d) || d.len() != 2 {
        return Err(bad());
    }
    let year: i32 = y.parse().map_err(|_| bad())?;
    let month: u32 = m.parse().map_err(|_| bad())?;
    let day: u32 = d.parse().map_err(|_| bad())?;
    NaiveDate::from_ymd_opt(sign * year, month, day)
        .ok_or_else(|| format!("invalid date '{s}': no such day"))
}

/// `HH:MM[:SS[.f]]` (no leap seconds).
fn parse_time(s: &str) -> Result<NaiveTime, String> {
    let bad = || format!("invalid time '{s}': expected HH:MM[:SS[.fff]]");
    let mut parts = s.split(':');
    let h = parts.next().ok_or_else(bad)?;
    let m = parts.next().ok_or_else(bad)?;
    let sec = parts.next();
    if parts.next().is_some() {
        return Err(bad());
    }
    if !all_digits(h) || h.len() != 2 || !all_digits(m) || m.len() != 2 {
        return Err(bad());
    }
    let hour: u32 = h.parse().map_err(|_| bad())?;
    let minute: u32 = m.parse().map_err(|_| bad())?;
    let (second, nanos) = match sec {
        None => (0, 0),
        Some(sec) => {
            let (whole, frac) = match sec.find(['.', ',']) {
                Some(p) => (&sec[..p], Some(&sec[p + 1..])),
                None => (sec, None),
            };
            if !all_digits(whole) || whole.len() != 2 {
                return Err(bad());
            }
            let second: u32 = whole.parse().map_err(|_| bad())?;
            let nanos = match frac {
                None => 0,
                Some(f) => {
                    if !all_digits(f) || f.len() > 9 {
                        return Err(bad());
                    }
                    let mut n: u32 = f.parse().map_err(|_| bad())?;
                    for _ in f.len()..9 {
                        n *= 10;
                    }
                    n
                }
            };
            (second, nanos)
        }
    };
    if second == 60 {
        return Err(bad());
    }
    NaiveTime::from_hms_nano_opt(hour, minute, second, nanos)
        .ok_or_else(|| format!("invalid time '{s}': out of range"))
}

/// `Z`, `+HH`, `+HH:MM`, `+HHMM`, `+HH:MM:SS`, `+HHMMSS` -> offset in seconds east of UTC.
fn parse_offset(s: &str) -> Result<i64, String> {
    if s.eq_ignore_ascii_case("Z") {
        return Ok(0);
    }
    let bad = || format!("invalid offset '{s}': expected 'Z' or '+HH:MM'");
    let sign = match s.as_bytes().first() {
        Some(b'+') => 1,
        Some(b'-') => -1,
        _ => return Err(bad()),
    };
    let rest = &s[1..];
    let digits: String = rest.chars().filter(|c| *c != ':').collect();
    if !all_digits(&digits) || !matches!(digits.len(), 2 | 4 | 6) {
        return Err(bad());
    }
    // Colons, if any, must separate pairs: HH:MM or HH:MM:SS.
    if rest.contains(':') && rest.split(':').any(|p| p.len() != 2) {
        return Err(bad());
    }
    let h: i64 = digits[0..2].parse().map_err(|_| bad())?;
    let m: i64 = if digits.len() >= 4 {
        digits[2..4].parse().map_err(|_| bad())?
    } else {
        0
    };
    let sec: i64 = if digits.len() == 6 {
        digits[4..6].parse().map_err(|_| bad())?
    } else {
        0
    };
    if h > 18 || m > 59 || sec > 59 || (h == 18 && (m > 0 || sec > 0)) {
        return Err(format!("invalid offset '{s}': out of range (max +/-18:00)"));
    }
    Ok(sign * (h * 3600 + m * 60 + sec))
}

/// A repeating interval `R[n]/[start/]duration`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cycle {
    /// `None` = repeat forever (`R/...`).
    pub repetitions: Option<u32>,
    /// The interval, calendar unaware (see [`IsoDuration::approx_millis`]).
    pub interval_ms: i64,
    /// Epoch millis of the first due date, when the cycle names a start (`R3/<date-time>/PT1H`).
    pub start: Option<i64>,
    /// The interval as written, for calendar-aware scheduling ([`IsoDuration::add_to`]).
    pub interval: IsoDuration,
}

/// Parses an ISO 8601 repeating interval: `R5/P2D`, `R/PT10S`, `R3/2024-01-01T00:00:00Z/PT1H`.
/// The interval must be positive. [`parse_time_cycle`] reads cron expressions too.
pub fn parse_cycle(s: &str) -> Result<Cycle, String> {
    let t = s.trim();
    if !t.starts_with(['R', 'r']) {
        return Err(format!(
            "'{t}' is not an ISO 8601 repeating interval (R[n]/[start/]duration)"
        ));
    }
    let parts: Vec<&str> = t.split('/').collect();
    let reps_text = &parts[0][1..];
    let repetitions = if reps_text.is_empty() {
        None
    } else if all_digits(reps_text) {
        Some(
            reps_text
                .parse::<u32>()
                .map_err(|_| "too many repetitions".to_string())?,
        )
    } else {
        return Err(format!(
            "invalid repetitions '{}': expected 'R' or 'R<n>'",
            parts[0]
        ));
    };
    let (start, duration_text) = match parts.as_slice() {
        [_, d] => (None, *d),
        [_, start, d] => (Some(parse_date_time(start)?), *d),
        _ => return Err("expected 'R[n]/duration' or 'R[n]/start/duration'".into()),
    };
    let interval = parse_iso_duration(duration_text)?;
    let interval_ms = interval.approx_millis()?;
    if interval_ms <= 0 {
        return Err("the interval of a cycle must be positive".into());
    }
    Ok(Cycle {
        repetitions,
        interval_ms,
        start,
        interval,
    })
}

/// A `timeCycle`: an ISO 8601 repeating interval, or a cron expression.
#[derive(Debug, Clone)]
pub enum TimeCycle {
    Repeating(Cycle),
    Cron(Box<CronCycle>),
}

/// A cron expression as Zeebe reads one (Spring's `CronExpression`): six fields, second minute
/// hour day-of-month month day-of-week, day-of-week 0-7 (0 and 7 are Sunday) or MON-SUN, both
/// day fields must match, Quartz-style steps (`0/15`) and `?`, and the macros `@yearly`, `@annually`, `@monthly`, `@weekly`,
/// `@daily`, `@midnight`, `@hourly`. Times are UTC. It repeats forever.
#[derive(Debug, Clone)]
pub struct CronCycle(croner::Cron);

impl CronCycle {
    /// The first time the expression matches strictly after `after` (epoch millis), at whole
    /// seconds.
    pub fn next_after(&self, after: i64) -> Result<i64, String> {
        let seconds = after.div_euclid(1000);
        let from = chrono::DateTime::from_timestamp(seconds, 0)
            .ok_or_else(|| format!("the time {after} is out of range"))?;
        self.0
            .find_next_occurrence(&from, false)
            .map(|t| t.timestamp_millis())
            .map_err(|e| format!("the cron expression has no next time: {e}"))
    }
}

/// Parses a `timeCycle`: an ISO 8601 repeating interval (`R5/PT10S`) or a cron expression
/// (`0 0 9-17 * * MON-FRI`).
pub fn parse_time_cycle(s: &str) -> Result<TimeCycle, String> {
    let t = s.trim();
    if t.starts_with(['R', 'r']) {
        return parse_cycle(t).map(TimeCycle::Repeating);
    }
    parse_cron(t).map(|c| TimeCycle::Cron(Box::new(c)))
}

fn parse_cron(t: &str) -> Result<CronCycle, String> {
    let expanded = match t.to_ascii_lowercase().as_str() {
        "@yearly" | "@annually" => "0 0 0 1 1 *",
        "@monthly" => "0 0 0 1 * *",
        "@weekly" => "0 0 0 * * 0",
        "@daily" | "@midnight" => "0 0 0 * * *",
        "@hourly" => "0 0 * * * *",
        _ => t,
    };
    let fields = expanded.split_whitespace().count();
    if fields != 6 {
        return Err(format!(
            "'{t}' is neither an ISO 8601 repeating interval (R[n]/[start/]duration) nor a cron \
             expression of six fields (second minute hour day-of-month month day-of-week)"
        ));
    }
    croner::parser::CronParser::builder()
        .seconds(croner::parser::Seconds::Required)
        .year(croner::parser::Year::Disallowed)
        .dom_and_dow(true)
        .sloppy_ranges(true)
        .build()
        .parse(expanded)
        .map(CronCycle)
        .map_err(|e| format!("invalid cron expression '{t}': {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1000;
    const M: i64 = 60 * S;
    const H: i64 = 60 * M;
    const D: i64 = 24 * H;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("PT1M"), Ok(M));
        assert_eq!(parse_duration("PT1S"), Ok(S));
        assert_eq!(parse_duration("PT20M"), Ok(20 * M));
        assert_eq!(parse_duration("P2D"), Ok(2 * D));
        assert_eq!(parse_duration("PT0.5S"), Ok(500));
        assert_eq!(parse_duration("PT0,25S"), Ok(250));
        assert_eq!(parse_duration("PT1.123456789S"), Ok(1123));
        assert_eq!(
            parse_duration("P1DT12H30M5S"),
            Ok(D + 12 * H + 30 * M + 5 * S)
        );
        assert_eq!(parse_duration("P1W"), Ok(7 * D));
        assert_eq!(parse_duration("P1Y2M3D"), Ok(365 * D + 60 * D + 3 * D));
        assert_eq!(parse_duration("-PT5S"), Ok(-5 * S));
        assert_eq!(parse_duration("PT-5S"), Ok(-5 * S));
        assert_eq!(parse_duration("PT-0.5S"), Ok(-500));
        assert_eq!(parse_duration("+PT5S"), Ok(5 * S));
        assert_eq!(parse_duration("  pt1m \n"), Ok(M));
        assert_eq!(parse_duration("PT0S"), Ok(0));
        assert_eq!(parse_duration("PT36H"), Ok(36 * H));
    }

    #[test]
    fn bad_durations() {
        for bad in [
            "",
            "P",
            "PT",
            "PTX",
            "1M",
            "PT1",
            "PT1X",
            "P1S",
            "PT1D",
            "PT1M1H",
            "P1D1Y",
            "P1.5D",
            "PT1.5M",
            "PT1.S",
            "PT.5S",
            "PT1.0123456789S",
            "P1DT",
            "PT99999999999999999999S",
            "PT9223372036854775807H",
            "P1Y1Y",
            "PTé",
            "Pé",
            "--PT1S",
            // Negating a component equal to i64::MIN overflows.
            "-P-1317624576693539401W-1D",
            "-PT-9223372036854775.808S",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn calendar_aware_add() {
        let jan31 = parse_date_time("2024-01-31T10:00:00Z").unwrap();
        let feb29 = parse_date_time("2024-02-29T10:00:00Z").unwrap();
        assert_eq!(parse_iso_duration("P1M").unwrap().add_to(jan31), Ok(feb29));
        let d = parse_iso_duration("P1Y1DT1H").unwrap();
        assert_eq!(
            d.add_to(jan31),
            Ok(parse_date_time("2025-02-01T11:00:00Z").unwrap())
        );
        let neg = parse_iso_duration("-P1M").unwrap();
        assert_eq!(
            neg.add_to(feb29),
            Ok(parse_date_time("2024-01-29T10:00:00Z").unwrap())
        );
        assert_eq!(parse_iso_duration("PT1M").unwrap().add_to(0), Ok(M));
        assert!(parse_iso_duration("P300000Y").unwrap().add_to(0).is_err());
    }

    #[test]
    fn date_times() {
        const JAN1: i64 = 1_704_067_200_000; // 2024-01-01T00:00:00Z
        for (text, expected) in [
            ("1970-01-01T00:00:00Z", 0),
            ("2024-01-01T00:00:00Z", JAN1),
            ("2024-01-01T10:00:00+01:00", JAN1 + 9 * H),
            ("2024-01-01T10:00:00+0100", JAN1 + 9 * H),
            ("2024-01-01T10:00:00+01", JAN1 + 9 * H),
            ("2024-01-01T10:00:00-02:30", JAN1 + 12 * H + 30 * M),
            ("2024-01-01T10:00:00+01:00[Europe/Berlin]", JAN1 + 9 * H),
            ("2024-01-01T10:00:00", JAN1 + 10 * H),
            ("2024-01-01T10:00", JAN1 + 10 * H),
            ("2024-01-01T10:00Z", JAN1 + 10 * H),
            ("2024-01-01T00:00:00.250Z", JAN1 + 250),
            ("2024-01-01T00:00:00.123456789Z", JAN1 + 123),
            ("2024-01-01t00:00:00z", JAN1),
            ("2024-01-01T00:00:00[UTC]", JAN1),
            (" 2024-01-01T00:00:00Z ", JAN1),
            ("1969-12-31T23:59:59Z", -1000),
        ] {
            assert_eq!(parse_date_time(text), Ok(expected), "{text:?}");
        }
    }

    #[test]
    fn bad_date_times() {
        for bad in [
            "",
            "2024-01-01",
            "2024-13-01T00:00:00Z",
            "2024-02-30T00:00:00Z",
            "2024-01-01T25:00:00Z",
            "2024-01-01T10:00:00+25:00",
            "2024-01-01T10:00:00[Europe/Berlin]",
            "2024-1-01T10:00Z",
            "2024-01-01T10Z",
            "2024-01-01T10:00:00+01:00[Europe/Berlin",
            "2024-08-307T10:00:00Z",
            "2024-01-01T10:00:00.Z",
            "2024-01-01T10:00:00+1:00",
            "2024-01-01T10:00:00+01:0",
            "2024-01-01 10:00:00Z",
            "é-01-01T10:00Z",
            "2024-01-01T10:00:00+01:00:",
            "T",
            "[]",
            "2024-01-01T10:00:60Z",
        ] {
            assert!(parse_date_time(bad).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn cycles() {
        let c = parse_cycle("R5/P2D").unwrap();
        assert_eq!(
            (c.repetitions, c.interval_ms, c.start),
            (Some(5), 2 * D, None)
        );
        let c = parse_cycle("R/PT10S").unwrap();
        assert_eq!(
            (c.repetitions, c.interval_ms, c.start),
            (None, 10 * S, None)
        );
        let c = parse_cycle("R3/2024-01-01T00:00:00Z/PT1H").unwrap();
        assert_eq!(
            (c.repetitions, c.interval_ms, c.start),
            (Some(3), H, Some(1_704_067_200_000))
        );
        assert_eq!(
            c.interval,
            IsoDuration {
                millis: H,
                ..Default::default()
            }
        );
        let c = parse_cycle(" r0/PT1S ").unwrap();
        assert_eq!(c.repetitions, Some(0));
    }

    #[test]
    fn cron_cycles() {
        // 2024-01-01T10:20:30.500Z, a Monday
        let now = 1_704_104_430_500;
        let next = |expr: &str| match parse_time_cycle(expr).unwrap() {
            TimeCycle::Cron(c) => c.next_after(now).unwrap(),
            other => panic!("{expr}: not cron: {other:?}"),
        };
        assert_eq!(next("* * * * * *"), now - 500 + S);
        assert_eq!(next("0 */15 * * * *"), 1_704_104_100_000 + 15 * M);
        assert_eq!(next("0 0 9 * * MON-FRI"), 1_704_099_600_000 + D);
        // Sunday is 0 and 7
        assert_eq!(next("0 0 0 * * 0"), next("0 0 0 * * 7"));
        assert_eq!(next("0 0 0 * * SUN"), 1_704_067_200_000 + 6 * D);
        assert_eq!(next("@daily"), 1_704_067_200_000 + D);
        assert_eq!(next("0 5/10 * * * ?"), 1_704_104_100_000 + 10 * M);
        assert_eq!(next("@hourly"), 1_704_103_200_000 + H);
        // both day fields must match: the 13th that is a Friday (September 2024)
        assert_eq!(next("0 0 0 13 * FRI"), 1_726_185_600_000);
        assert!(matches!(
            parse_time_cycle("R3/PT1S").unwrap(),
            TimeCycle::Repeating(_)
        ));
        for bad in [
            "0 0 * * *",
            "0 0 * * * * *",
            "61 0 * * * *",
            "x y z a b c",
            "@often",
        ] {
            assert!(parse_time_cycle(bad).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn bad_cycles() {
        let cron = parse_cycle("0 0 * * * *").unwrap_err();
        assert!(cron.contains("repeating interval"), "{cron}");
        for bad in [
            "",
            "R",
            "R/",
            "R5",
            "R5/PTX",
            "Rx/PT1S",
            "R-1/PT1S",
            "R/PT0S",
            "R/-PT1S",
            "R/a/PT1S",
            "R/2024-01-01T00:00:00Z/PT1H/x",
            "R99999999999/PT1S",
            "PT1S",
            "Ré/PT1S",
        ] {
            assert!(parse_cycle(bad).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn never_panics_on_noise() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let alphabet: &[u8] = b"PTRYMWDHS0123456789.,+-:/Zz[]T \xc3\xa9";
        for _ in 0..20_000 {
            let len = (x % 24) as usize;
            let mut bytes = Vec::with_capacity(len);
            for _ in 0..len {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                bytes.push(alphabet[(x % alphabet.len() as u64) as usize]);
            }
            let s = String::from_utf8_lossy(&bytes);
            let _ = parse_duration(&s);
            let _ = parse_date_time(&s);
            let _ = parse_cycle(&s);
        }
    }
}

/// Epoch milliseconds as an ISO 8601 date-time in UTC, written as Java's `ZonedDateTime`
/// writes it (what Zeebe puts in a user task's due date header): seconds only when not zero,
/// milliseconds only when not zero, `Z` for UTC. E.g. `2030-01-01T10:00Z`.
pub fn format_date_time_utc(millis: i64) -> Option<String> {
    use chrono::Timelike;
    let t = chrono::DateTime::<chrono::Utc>::from_timestamp_millis(millis)?;
    let mut out = t.format("%Y-%m-%dT%H:%M").to_string();
    let ms = t.nanosecond() / 1_000_000;
    if t.second() != 0 || ms != 0 {
        out.push_str(&format!(":{:02}", t.second()));
    }
    if ms != 0 {
        out.push_str(&format!(".{ms:03}"));
    }
    out.push('Z');
    Some(out)
}

#[cfg(test)]
mod format_tests {
    use super::*;

    #[test]
    fn formats_like_java_zoned_date_time() {
        let t = parse_date_time("2030-01-01T10:00:00Z").unwrap();
        assert_eq!(format_date_time_utc(t).unwrap(), "2030-01-01T10:00Z");
        let t = parse_date_time("2030-01-01T10:00:05.120+01:00").unwrap();
        assert_eq!(format_date_time_utc(t).unwrap(), "2030-01-01T09:00:05.120Z");
    }
}
