//! 10: "show this array": a 1000x700 field of `f32` in device memory on screen in one call,
//! through a colour map, on whatever GL the machine has.
//!
//! Headless: a GL context on CUDA device 0 where NVIDIA's EGL has one (the display target then
//! maps its texture for CUDA, interop mode), otherwise any GL there is (Mesa's llvmpipe in a
//! container, say: the target copies through pinned host memory, staged mode). Its report line
//! says which mode and why. The field, ripples between -1 and 1, is shown with
//! `DisplayTarget::show` through viridis (`set_color_map`), which cuda-gl applies on the GPU.
//!
//! The check: the texture, read back, equals `ColorMap::color_of` of each value in every pixel
//! (the host's computation of the colours the GPU draws). With `CUDA_GL_REQUIRE_MESA=1` (as
//! `ci/gpu/suite.sh --mesa` runs it) it also fails unless the GL was Mesa's and the target
//! staged.
//!
//! Run: `cargo run --release -p cuda-gl --example 10_show_field --features egl`
//! (`-- --screenshot 10.png` to keep the image; it has no `--window`).

#[path = "common/mod.rs"]
mod common;

use anyhow::{Result, bail};
use common::Outcome;
use cuda_gl::display::{ColorMap, DisplayTarget, Format, Layout, Palette};
use cuda_gl::{Context, DeviceBuffer, Stream, StreamFlags};
use std::process::ExitCode;

fn main() -> ExitCode {
    common::main(run)
}

fn run(args: &common::Args) -> Result<Outcome> {
    // GL on the CUDA GPU if this machine has it, any GL otherwise: the target works with both.
    // The context must outlive the target (a named variable, not `let _ = ...`); it also loads
    // the `gl` crate, which the read-back below uses.
    let (device, _gl) = common::headless_any_gl(args, "10")?;
    let ctx = Context::new(&device)?;
    let stream = Stream::new(&ctx, StreamFlags::NonBlocking)?;

    // The array: row y of the image is row y of the field (GL's first row, drawn at the bottom).
    let (w, h) = (1000u32, 700u32);
    let field: Vec<f32> = (0..h)
        .flat_map(|y| (0..w).map(move |x| (x, y)))
        .map(|(x, y)| {
            let (dx, dy) = (x as f32 / w as f32 - 0.4, y as f32 / h as f32 - 0.6);
            ((dx * dx + dy * dy).sqrt() * 40.0).sin()
        })
        .collect();
    let device_field = DeviceBuffer::from_slice(&ctx, &field)?;

    // The whole of "show this array": a target (in the fastest mode that works here), a colour
    // map, one call.
    let (mut target, report) =
        DisplayTarget::new(&ctx, Layout::packed((w, h), Format::Rgba8)?, None)?;
    println!("{report}");
    common::check_required_mesa(&report)?;
    let viridis = ColorMap::new(Palette::Viridis, -1.0, 1.0)?;
    target.set_color_map(Some(viridis))?;
    target.show(
        &device_field,
        Layout::new((w, h), w as usize * 4, Format::R32F)?,
        &stream,
    )?;
    // ... a program of your own draws target.texture().0 here ...

    // glGetTexImage: the texture is RGBA8 (a grey one-channel target would read back as
    // (v, 0, 0, 1): its grey is the sampler's swizzle).
    let image: Vec<u8> = gl_kit::readback::texture(gl::TEXTURE_2D, target.texture().0, 0)?;
    if image.len() != field.len() * 4 {
        bail!("read back {} bytes, not {}x{} RGBA8", image.len(), w, h);
    }
    let wrong: Vec<usize> = (0..field.len())
        .filter(|&i| image[i * 4..i * 4 + 4] != viridis.color_of(field[i]))
        .collect();
    common::screenshot(args.screenshot.as_deref(), (w, h), &image)?;
    drop(target);
    ctx.check_drop_errors()?;

    let summary = format!(
        "a {w}x{h} R32F field shown through viridis in {} mode; {} of {} pixels differ from \
         ColorMap::color_of",
        report.mode,
        wrong.len(),
        field.len()
    );
    Ok(match wrong.first() {
        None => Outcome::Ok(summary),
        Some(&i) => Outcome::Mismatch(format!(
            "{summary}; first at ({}, {}): {:?}, want {:?}",
            i % w as usize,
            i / w as usize,
            &image[i * 4..i * 4 + 4],
            viridis.color_of(field[i])
        )),
    })
}
