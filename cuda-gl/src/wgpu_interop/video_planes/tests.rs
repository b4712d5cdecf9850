//! The wgpu video planes' tests that need no GPU: the planes' sizes and bytes, and the checks
//! of a frame's size.

#![allow(clippy::unwrap_used)]

use super::plane::{check_side, planes_of};
use super::*;
use crate::Error;
use crate::wgpu_interop::format::SharedFormat;

#[test]
fn the_planes_of_odd_frames_round_the_chroma_up() -> Result<()> {
    let [luma, chroma] = planes_of((1001, 333), VideoFormat::P010, "t")?;
    assert_eq!(
        (luma.size, luma.format),
        ((1001, 333), SharedFormat::R16Unorm)
    );
    assert_eq!(
        (chroma.size, chroma.format),
        ((501, 167), SharedFormat::Rg16Unorm)
    );
    assert_eq!((luma.row, chroma.row), (2002, 2004));
    let [luma, chroma] = planes_of((77, 1201), VideoFormat::Nv12, "t")?;
    assert_eq!(
        (luma.format, chroma.format),
        (SharedFormat::R8Unorm, SharedFormat::Rg8Unorm)
    );
    assert_eq!((luma.bytes, chroma.bytes), (77 * 1201, 39 * 2 * 601));
    Ok(())
}

/// The planes' rows are the layout's: the same bytes per row as the layout counts.
#[test]
fn the_planes_rows_are_the_layouts() -> Result<()> {
    for format in [VideoFormat::Nv12, VideoFormat::P010] {
        for size in [(1, 1), (5, 3), (1920, 1080), (1001, 333)] {
            let layout = VideoLayout::packed(size, format)?;
            let [luma, chroma] = planes_of(size, format, "t")?;
            assert_eq!(luma.row, layout.luma_row_bytes(), "{format:?} {size:?}");
            assert_eq!(chroma.row, layout.chroma_row_bytes(), "{format:?} {size:?}");
            assert_eq!(chroma.size, layout.chroma_size(), "{format:?} {size:?}");
            assert_eq!(
                rows_of(&layout),
                [
                    (0, layout.luma_pitch()),
                    (layout.chroma_offset(), layout.chroma_pitch())
                ]
            );
        }
    }
    Ok(())
}

/// Planes whose bytes overflow a `usize` are a typed error naming the call (the bytes were
/// multiplied unchecked: a panic in debug builds, a wrapped size in release ones).
#[test]
fn planes_too_large_to_count_are_a_typed_error() {
    let e = planes_of((u32::MAX, u32::MAX), VideoFormat::P010, UPLOAD.name).unwrap_err();
    assert!(
        matches!(
            e,
            VideoError::TooLarge {
                call: "WgpuVideoPlanes::upload",
                width: u32::MAX,
                height: u32::MAX,
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("help: "), "{e}");
}

/// A frame over the device's limit is refused naming the call it was given to.
#[test]
fn a_side_over_the_limit_names_the_call() {
    for call in [NEW, UPLOAD] {
        assert!(check_side((100, 80), 100, call).is_ok());
        let e = Error::from(check_side((3, 101), 100, call).unwrap_err());
        let text = e.to_string();
        assert!(
            matches!(
                e,
                Error::Usage(UsageError::TooLarge {
                    value: 101,
                    max: 100,
                    ..
                })
            ),
            "{text}"
        );
        assert!(text.starts_with(&format!("{}: ", call.name)), "{text}");
    }
}
