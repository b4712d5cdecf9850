//! The wait limit: how long each of cuda-gl's own waits for the GPU may take before it gives up
//! with [`Error::Timeout`](crate::Error::Timeout). One setting for the whole process, kept in an
//! atomic and read at each wait, so that a change applies to the waits that start after it.

use crate::error::{Result, UsageError};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The limit when neither [`set_wait_limit`] nor [`WAIT_LIMIT_ENV`] sets one: 10 s, as the
/// external ring's default timeout.
const DEFAULT_WAIT_LIMIT: Duration = Duration::from_secs(10);

/// The longest limit [`set_wait_limit`] takes: a wait longer than an hour is a hang, not work.
const MAX_WAIT_LIMIT: Duration = Duration::from_secs(3600);

/// The environment variable read, once, at the first wait when [`set_wait_limit`] was not called
/// before: the limit in whole milliseconds (`3000` for 3 s).
const WAIT_LIMIT_ENV: &str = "CUDA_GL_WAIT_LIMIT_MS";

/// The limit in milliseconds; 0 until it is first read or set.
static LIMIT_MS: AtomicU64 = AtomicU64::new(0);

/// How long each of cuda-gl's own waits for the GPU may take before it gives up with
/// [`Error::Timeout`](crate::Error::Timeout): the recovery of a leaked guard or forgotten frame,
/// a drop's wait for the work that still uses what it frees (past the limit it leaks it instead),
/// a staged present's or read-back's wait for the frame's kernel, a pinned buffer's
/// [`as_slice`](crate::PinnedBuffer::as_slice), and the others whose docs say "the wait limit".
/// Calls that take a limit of their own (`as_slice_within`, an external ring's timeout) use
/// theirs instead.
///
/// 10 s by default; [`set_wait_limit`] changes it, or, before the first wait, the environment
/// variable `CUDA_GL_WAIT_LIMIT_MS` (whole milliseconds: `CUDA_GL_WAIT_LIMIT_MS=60000` for a
/// minute; a value that is not a number of 1 to 3 600 000 is logged as a warning and ignored).
/// Each wait reads it when it starts.
///
/// ```
/// // A kernel of this program may legitimately run for up to 30 s.
/// if cuda_gl::wait_limit() < std::time::Duration::from_secs(40) {
///     cuda_gl::set_wait_limit(std::time::Duration::from_secs(40))?;
/// }
/// # Ok::<(), cuda_gl::Error>(())
/// ```
pub fn wait_limit() -> Duration {
    static FROM_ENV: OnceLock<u64> = OnceLock::new();
    read_from(&LIMIT_MS, || *FROM_ENV.get_or_init(limit_from_env))
}

/// The limit held in `cell`, which holds 0 until set: then the one `from_env` gives, stored
/// unless a set stored one meanwhile (a set wins over the environment).
fn read_from(cell: &AtomicU64, from_env: impl FnOnce() -> u64) -> Duration {
    let ms = cell.load(Ordering::Relaxed);
    if ms != 0 {
        return Duration::from_millis(ms);
    }
    let from_env = from_env();
    match cell.compare_exchange(0, from_env, Ordering::Relaxed, Ordering::Relaxed) {
        Ok(_) => Duration::from_millis(from_env),
        Err(set) => Duration::from_millis(set),
    }
}

/// The limit, in milliseconds, that [`WAIT_LIMIT_ENV`] sets; the default when it is unset, or
/// when it is invalid (with a warning).
fn limit_from_env() -> u64 {
    let limit = match std::env::var(WAIT_LIMIT_ENV) {
        Err(std::env::VarError::NotPresent) => DEFAULT_WAIT_LIMIT,
        Err(std::env::VarError::NotUnicode(value)) => {
            warn_ignored(&format!("{value:?} is not a number"));
            DEFAULT_WAIT_LIMIT
        }
        Ok(value) => parse_limit_ms(&value).unwrap_or_else(|why| {
            warn_ignored(&why);
            DEFAULT_WAIT_LIMIT
        }),
    };
    whole_millis(limit)
}

/// Sets [`wait_limit`] for the whole process: the waits that start after this call give up
/// after `limit` (those already waiting keep the limit they started with). It takes precedence
/// over `CUDA_GL_WAIT_LIMIT_MS`. Kept in whole milliseconds, rounded up.
///
/// Raise it when a kernel of yours legitimately runs longer than 10 s (a large simulation step):
/// a staged present or a recovery behind it would otherwise give up with
/// [`Error::Timeout`](crate::Error::Timeout). Lower it to notice a hung kernel sooner.
///
/// # Errors
/// [`UsageError::BadWaitLimit`] for a zero limit or one over an hour (the limit is unchanged).
pub fn set_wait_limit(limit: Duration) -> Result<()> {
    set_in(&LIMIT_MS, limit)
}

/// [`set_wait_limit`] of the limit held in `cell`.
fn set_in(cell: &AtomicU64, limit: Duration) -> Result<()> {
    check_limit(limit)?;
    cell.store(whole_millis(limit), Ordering::Relaxed);
    Ok(())
}

/// `limit`, refused with [`UsageError::BadWaitLimit`] when zero or over [`MAX_WAIT_LIMIT`].
fn check_limit(limit: Duration) -> Result<Duration> {
    if limit.is_zero() || limit > MAX_WAIT_LIMIT {
        return Err(UsageError::BadWaitLimit {
            given: limit,
            max: MAX_WAIT_LIMIT,
        }
        .into());
    }
    Ok(limit)
}

/// `limit` in whole milliseconds, rounded up (a checked limit: 1 to 3 600 000).
fn whole_millis(limit: Duration) -> u64 {
    let ms = u64::try_from(limit.as_millis()).unwrap_or(u64::MAX);
    if limit.subsec_nanos().is_multiple_of(1_000_000) {
        ms
    } else {
        ms.saturating_add(1)
    }
}

/// The limit that `value` of [`WAIT_LIMIT_ENV`] asks for, or why it is ignored.
fn parse_limit_ms(value: &str) -> std::result::Result<Duration, String> {
    let ms: u64 = value
        .trim()
        .parse()
        .map_err(|_| format!("{value:?} is not a whole number of milliseconds"))?;
    check_limit(Duration::from_millis(ms)).map_err(|_| {
        format!(
            "{ms} ms is not a limit: it must be 1 to {}",
            MAX_WAIT_LIMIT.as_millis()
        )
    })
}

/// Logs that [`WAIT_LIMIT_ENV`] was ignored, and why.
fn warn_ignored(why: &str) {
    log::warn!(
        "cuda-gl: {WAIT_LIMIT_ENV} is ignored: {why}; the wait limit stays {DEFAULT_WAIT_LIMIT:?} \
         (help: set it to the limit in whole milliseconds, e.g. {WAIT_LIMIT_ENV}=30000, or call \
         cuda_gl::set_wait_limit)"
    );
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use super::*;
    use crate::Error;

    #[test]
    fn zero_and_absurd_limits_are_refused_with_help() {
        for limit in [
            Duration::ZERO,
            MAX_WAIT_LIMIT + Duration::from_millis(1),
            Duration::MAX,
        ] {
            let e = set_wait_limit(limit).unwrap_err();
            assert!(
                matches!(&e, Error::Usage(UsageError::BadWaitLimit { given, .. }) if *given == limit),
                "{e:?}"
            );
            let message = e.to_string();
            assert!(message.contains("set_wait_limit"), "{message}");
            assert!(message.contains("\nhelp: "), "{message}");
        }
        check_limit(MAX_WAIT_LIMIT).unwrap();
        check_limit(Duration::from_nanos(1)).unwrap();
    }

    /// On a cell of its own: the process-wide limit is left alone, since the crate's other tests
    /// (GPU ones among them) run on threads of the same process.
    #[test]
    fn a_set_limit_is_what_later_waits_read_and_wins_over_the_environment() {
        let cell = AtomicU64::new(0);
        assert_eq!(read_from(&cell, || 4000), Duration::from_secs(4));
        // Read once: later reads do not ask the environment again.
        assert_eq!(
            read_from(&cell, || panic!("read twice")),
            Duration::from_secs(4)
        );
        set_in(&cell, Duration::from_millis(2500)).unwrap();
        assert_eq!(read_from(&cell, || 4000), Duration::from_millis(2500));
        // Kept in whole milliseconds, rounded up: never shorter than asked.
        set_in(&cell, Duration::from_micros(1500)).unwrap();
        assert_eq!(read_from(&cell, || 4000), Duration::from_millis(2));
        // A refused limit leaves the limit as it was.
        set_in(&cell, Duration::ZERO).unwrap_err();
        assert_eq!(read_from(&cell, || 4000), Duration::from_millis(2));
        // A set before the first read: the environment is not asked.
        let cell = AtomicU64::new(0);
        set_in(&cell, Duration::from_secs(30)).unwrap();
        assert_eq!(
            read_from(&cell, || panic!("asked the environment")),
            Duration::from_secs(30)
        );
        // Unset, the process-wide limit is the default (the tests run without the variable).
        if std::env::var_os(WAIT_LIMIT_ENV).is_none() {
            assert_eq!(wait_limit(), DEFAULT_WAIT_LIMIT);
        }
    }

    #[test]
    fn the_environment_variable_is_parsed_as_whole_milliseconds() {
        assert_eq!(parse_limit_ms("3000"), Ok(Duration::from_secs(3)));
        assert_eq!(parse_limit_ms(" 250\n"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_limit_ms("3600000"), Ok(MAX_WAIT_LIMIT));
        for bad in [
            "0",
            "3600001",
            "-5",
            "3s",
            "1.5",
            "",
            "18446744073709551616",
        ] {
            let why = parse_limit_ms(bad).unwrap_err();
            println!("{bad:?}: {why}");
            assert!(!why.is_empty());
        }
        assert!(parse_limit_ms("0").unwrap_err().contains("1 to 3600000"));
    }

    #[test]
    fn whole_millis_rounds_up() {
        assert_eq!(whole_millis(Duration::from_secs(10)), 10_000);
        assert_eq!(whole_millis(Duration::from_nanos(1)), 1);
        assert_eq!(whole_millis(Duration::from_nanos(1_000_001)), 2);
        assert_eq!(whole_millis(MAX_WAIT_LIMIT), 3_600_000);
    }
}
