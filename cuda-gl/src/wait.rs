//! cuda-gl's own waits for the GPU, each with a limit: the default limit, and the loop that
//! polls a query (`cuEventQuery`, `cuStreamQuery`) until it answers or the limit passes. The
//! driver's blocking waits (`cuStreamSynchronize`, `cuEventSynchronize`) have no timeout, so a
//! kernel that never ends would hang the thread in them; a polled wait gives up with
//! [`Error::Timeout`] instead, and the caller leaks what the work may still use.

use crate::error::{Error, Result};
use std::time::{Duration, Instant};

/// How long cuda-gl's own waits for the GPU (a pinned buffer's copies, for instance) may take
/// before they give up with [`Error::Timeout`]: 10 s, as the external ring's default.
pub(crate) const DEFAULT_WAIT_LIMIT: Duration = Duration::from_secs(10);

/// Polls `finished` until it answers `true`, for at most `limit` (a query that answers `true`
/// at once never times out, whatever the limit).
///
/// It polls without pausing for the first 100 µs (short waits, such as a staged display band's
/// copy, end within microseconds of the work), then sleeps between polls, so a long wait costs
/// a little latency (a sleep lasts at least the system's timer slack, 50 µs by default on Linux)
/// rather than a busy core.
///
/// # Errors
/// [`Error::Timeout`] naming `what` when `finished` has not answered `true` within `limit`;
/// `finished`'s own error, at once.
pub(crate) fn poll_within(
    limit: Duration,
    what: &str,
    mut finished: impl FnMut() -> Result<bool>,
) -> Result<()> {
    const SPIN: Duration = Duration::from_micros(100);
    let start = Instant::now();
    let mut pause = Duration::from_micros(1);
    while !finished()? {
        let waited = start.elapsed();
        if waited >= limit {
            return Err(Error::Timeout {
                what: what.into(),
                timeout: limit,
            });
        }
        if waited < SPIN {
            std::hint::spin_loop();
            continue;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_micros(50));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use super::*;

    #[test]
    fn a_query_that_never_answers_gives_up_at_the_limit() {
        let limit = Duration::from_millis(30);
        let mut polls = 0u32;
        let start = Instant::now();
        let e = poll_within(limit, "the test's work", || {
            polls += 1;
            Ok(false)
        })
        .unwrap_err();
        let took = start.elapsed();
        match &e {
            Error::Timeout { what, timeout } => {
                assert_eq!(what, "the test's work");
                assert_eq!(*timeout, limit);
            }
            other => panic!("expected Error::Timeout, got {other:?}"),
        }
        assert!(took >= limit, "gave up after {took:?}, before the limit");
        assert!(took < limit + Duration::from_secs(2), "took {took:?}");
        assert!(polls > 1, "polled {polls} times");
        assert!(e.to_string().contains("help: "), "{e}");
    }

    #[test]
    fn it_returns_when_the_query_answers() {
        let mut polls = 0u32;
        poll_within(Duration::from_secs(5), "the test's work", || {
            polls += 1;
            Ok(polls == 5)
        })
        .unwrap();
        assert_eq!(polls, 5);
    }

    #[test]
    fn a_finished_query_never_times_out_and_a_zero_limit_polls_once() {
        poll_within(Duration::ZERO, "done work", || Ok(true)).unwrap();
        let mut polls = 0u32;
        let e = poll_within(Duration::ZERO, "running work", || {
            polls += 1;
            Ok(false)
        })
        .unwrap_err();
        assert!(matches!(e, Error::Timeout { .. }), "{e:?}");
        assert_eq!(polls, 1);
    }

    #[test]
    fn a_query_error_ends_the_wait_with_it() {
        let mut polls = 0u32;
        let e = poll_within(Duration::from_secs(5), "the test's work", || {
            polls += 1;
            if polls == 2 {
                Err(Error::Internal {
                    what: "the query failed".into(),
                })
            } else {
                Ok(false)
            }
        })
        .unwrap_err();
        assert!(
            matches!(&e, Error::Internal { what } if what == "the query failed"),
            "{e:?}"
        );
        assert_eq!(polls, 2);
    }
}
