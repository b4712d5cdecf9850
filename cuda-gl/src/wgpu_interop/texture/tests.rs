//! `SharedTexture`'s checks that run before any GPU call.
#![allow(clippy::unwrap_used, clippy::panic)]

use super::*;
use crate::error::Error;

#[test]
fn sizes_are_checked_before_any_gpu_call() {
    let zero = |e| matches!(e, Error::Usage(UsageError::ZeroSize { .. }));
    assert!(zero(check_size(0, 10, 100).unwrap_err()));
    assert!(zero(check_size(10, 0, 100).unwrap_err()));
    let big = check_size(101, 10, 100).unwrap_err();
    assert!(
        matches!(big, Error::Usage(UsageError::TooLarge { .. })),
        "{big}"
    );
    assert!(big.to_string().contains("101"), "{big}");
    assert!(big.to_string().starts_with("SharedTexture::new: "), "{big}");
    assert!(check_size(100, 1, 100).is_ok());
}

/// The driver's export limit is the interop mode's (a `WgpuError`, after which auto mode
/// falls back to staged), not a usage error (which ends auto mode's search): it was one.
#[test]
fn the_export_limit_is_refused_as_the_modes_own() {
    let format = SharedFormat::R8Unorm;
    assert!(check_export_size((100, 50), (100, 50), format).is_ok());
    for size in [(101, 50), (100, 51)] {
        let e = check_export_size(size, (100, 50), format).unwrap_err();
        assert!(
            matches!(&e, Error::Wgpu(WgpuError::ExportTooLarge { size: s, max: (100, 50), .. }) if *s == size),
            "{e}"
        );
        assert!(!crate::mode_choice::refused_in_every_mode(&e), "{e}");
    }
    let usage = check_size(101, 1, 100).unwrap_err();
    assert!(crate::mode_choice::refused_in_every_mode(&usage), "{usage}");
}
