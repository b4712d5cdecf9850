//! The `reference` and `compare` subcommands: the CPU reference image without any OpenGL, and
//! comparing two PNGs.

use crate::cli::{CompareArgs, ReferenceArgs, Size};
use crate::plasma_cpu::render_cpu;
use crate::png_io::{Image, compare};
use anyhow::{Context as _, Result};

/// The CPU reference frame of `size` at time `t`, top row first (as [`Image`] and the
/// screenshots are).
///
/// # Errors
/// Never in practice (the buffer always has the right size).
pub fn reference_image(size: Size, t: f32) -> Result<Image> {
    let mut frame = vec![0u8; size.rgba_bytes()];
    render_cpu(&mut frame, size.width, size.height, t);
    Image::from_bottom_up(size.width, size.height, &frame)
}

/// `plasma-demo reference`: writes the reference PNG and says so.
///
/// # Errors
/// When the PNG cannot be written.
pub fn write_reference(args: &ReferenceArgs) -> Result<()> {
    let image = reference_image(args.size, args.time)?;
    image
        .write_png(&args.out)
        .with_context(|| format!("writing the reference image {}", args.out.display()))?;
    println!(
        "plasma-demo: wrote the CPU reference {} ({}, t = {} s)",
        args.out.display(),
        args.size,
        args.time
    );
    Ok(())
}

/// `plasma-demo compare`: prints one line with the result; `Ok(true)` when every channel is
/// within the tolerance.
///
/// # Errors
/// When a file cannot be read or the sizes differ.
pub fn compare_files(args: &CompareArgs) -> Result<bool> {
    let a = Image::read_png(&args.a)?;
    let b = Image::read_png(&args.b)?;
    let d = compare(&a, &b, args.tolerance).with_context(|| {
        format!(
            "cannot compare {} with {}",
            args.a.display(),
            args.b.display()
        )
    })?;
    let verdict = if d.within_tolerance() {
        "match".to_string()
    } else {
        let (x, y) = d.first_over.unwrap_or_default();
        format!("MISMATCH (first at x = {x}, y = {y} from the top)")
    };
    println!(
        "compare {} {} ({}x{}): max channel diff {}, {} of {} channels ({} pixels) over \
         tolerance {}: {verdict}",
        args.a.display(),
        args.b.display(),
        a.width,
        a.height,
        d.max_channel_diff,
        d.channels_over,
        d.channels,
        d.pixels_over,
        args.tolerance
    );
    Ok(d.within_tolerance())
}
