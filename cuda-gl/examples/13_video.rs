//! 13: decoded video on screen, without a decoder: a kernel writes each frame of a moving test
//! pattern as a decoder would leave it (NV12 or P010 in device memory, at a decoder's pitch),
//! and `DisplayTarget::show_video` converts it to RGBA8 on the GPU and shows it, one call a
//! frame.
//!
//! Two streams, as NVDEC lays them out: NV12 at 1920x1080 with a pitch of 2048 bytes and the
//! chroma plane after the luma's aligned height of 1088 rows (`VideoLayout::with_chroma`), and
//! P010 at an odd 1001x333 (the chroma plane rounded up to 501x167 pairs; junk in the 6 low bits
//! of every word, which the format ignores), pitch 2048, chroma after 336 rows. The second half
//! of each stream is shown as another colour space than the first (a stream may signal one):
//! BT.709 limited range (the default) then BT.601 limited for the NV12, BT.2020 limited then
//! BT.2020 full for the P010. The pattern (`video_test_pattern` in `kernels/examples.cu`):
//! scrolling colour bars, a moving luma ramp and a disc that crosses the frame.
//!
//! Headless, on any GL, as example 10: GL on CUDA device 0 where NVIDIA's EGL has one (the
//! target maps its texture for CUDA, interop mode), otherwise any GL there is (Mesa's llvmpipe,
//! say: the target copies through pinned host memory, staged mode); the report line says which.
//!
//! Each frame also goes, as it is, into two GL textures of the program's (R8 + RG8 for NV12,
//! R16 + RG16 for P010) through `video::VideoPlanes`, for a shader of one's own that converts
//! the planes itself: the GL part of the check below reads them back.
//!
//! The check, on every 10th frame and the last: the planes, downloaded, equal the CPU's pattern
//! byte for byte (padding untouched); the texture, read back, is within 1 per channel of
//! `video::convert_cpu` of those planes in every pixel; and the plane textures hold the planes'
//! rows byte for byte. With `CUDA_GL_REQUIRE_MESA=1` (as `ci/gpu/suite.sh --mesa` runs it) it
//! also fails unless the GL was Mesa's and the target and the planes staged.
//!
//! Run: `cargo run --release -p cuda-gl --example 13_video --features egl`
//! (`-- --screenshot 13.png` to keep the last 1080p frame; it has no `--window`).

#[path = "common/mod.rs"]
mod common;
#[path = "common/plane_textures.rs"]
mod plane_textures;
#[path = "common/video_pattern.rs"]
mod video_pattern;

use anyhow::{Result, bail};
use common::Mismatch;
use cuda_gl::display::{DisplayTarget, Format, Layout};
use cuda_gl::video::{ColorMatrix, ColorRange, ColorSpace, VideoFormat, VideoLayout, convert_cpu};
use cuda_gl::{Context, DeviceBuffer, Function, LaunchConfig, Module, Stream, StreamFlags};
use plane_textures::PlaneTextures;
use std::process::ExitCode;
use video_pattern::{PADDING, compare, first_difference, pattern_cpu};

/// Every how many frames the texture is read back and checked (the last frame is checked too).
const CHECK_EVERY: u32 = 10;

/// One synthetic stream: its layout, how many frames, and the colour space of each half.
struct Clip {
    layout: VideoLayout,
    frames: u32,
    colors: [ColorSpace; 2],
}

impl Clip {
    /// The colour space frame `frame` is shown as: the first's for the first half, then the
    /// second's.
    fn color_of(&self, frame: u32) -> ColorSpace {
        self.colors[usize::from(frame >= self.frames / 2)]
    }
}

/// What the checks of one stream found.
#[derive(Default)]
struct Checked {
    /// Frames read back and compared.
    frames: u32,
    /// Pixels compared.
    pixels: usize,
    /// Bytes of the plane textures compared.
    plane_bytes: usize,
    /// The planes' mode.
    planes_mode: Option<cuda_gl::display::Mode>,
    /// Channels that differ from the CPU's by exactly 1 (allowed).
    off_by_one: usize,
    /// The last frame read back: its size and RGBA8 pixels, row 0 (the video's top row) first.
    last: Option<((u32, u32), Vec<u8>)>,
}

fn main() -> ExitCode {
    common::main(|args| common::outcome_of(run(args)))
}

fn run(args: &common::Args) -> Result<String> {
    // GL on the CUDA GPU if this machine has it, any GL otherwise (as in 10). The context must
    // outlive the target (a named variable, not `let _ = ...`).
    let (device, _gl) = common::headless_any_gl(args, "13")?;
    let ctx = Context::new(&device)?;
    let stream = Stream::new(&ctx, StreamFlags::NonBlocking)?;
    // The "decoder": the examples' kernels, compiled to PTX ahead of time (`cargo xtask ptx`).
    let module = Module::from_ptx(&ctx, common::PTX)?;
    let pattern = module.function("video_test_pattern")?;

    // NVDEC's layouts: pitch 2048, the chroma plane after the luma's aligned height (1080 ->
    // 1088, 333 -> 336 rows).
    let nv12 = Clip {
        layout: VideoLayout::with_chroma((1920, 1080), VideoFormat::Nv12, 2048, 2048 * 1088, 2048)?,
        frames: 60,
        colors: [
            ColorSpace::default(),
            ColorSpace::new(ColorMatrix::Bt601, ColorRange::Limited),
        ],
    };
    let p010 = Clip {
        layout: VideoLayout::with_chroma((1001, 333), VideoFormat::P010, 2048, 2048 * 336, 2048)?,
        frames: 30,
        colors: [
            ColorSpace::new(ColorMatrix::Bt2020, ColorRange::Limited),
            ColorSpace::new(ColorMatrix::Bt2020, ColorRange::Full),
        ],
    };

    // The target: it takes each frame's size (and RGBA8) as it is shown.
    let (mut target, report) =
        DisplayTarget::new(&ctx, Layout::packed((1001, 333), Format::Rgba8)?, None)?;
    println!("{report}");
    common::check_required_mesa(&report)?;

    // The P010 first, so that the last frame shown (and the screenshot) is the 1080p one.
    let p010_checked = play(&p010, &mut target, &pattern, &stream)?;
    let nv12_checked = play(&nv12, &mut target, &pattern, &stream)?;

    if let (Some(path), Some(((w, h), pixels))) = (&args.screenshot, &nv12_checked.last) {
        // Row 0 is the video's top row: the PNG's first row as it is.
        gl_kit::image::write_png(path, *w, *h, pixels)?;
        println!("wrote {} ({w}x{h})", path.display());
    }
    let mode = target.mode();
    drop(target);
    ctx.check_drop_errors()?;
    let planes_mode = nv12_checked
        .planes_mode
        .map_or("none".into(), |m| m.to_string());

    let name = |c: ColorSpace| format!("{:?} {:?}", c.matrix, c.range).to_lowercase();
    Ok(format!(
        "{mode} mode, {} frames of NV12 1920x1080 and {} of P010 1001x333, {} pixels compared \
         ({} frames read back; {} then {} for the NV12, {} then {} for the P010; every plane \
         equal to the CPU's pattern, every pixel within 1 of video::convert_cpu, {} channels off \
         by 1); VideoPlanes in {planes_mode} mode, {} bytes of plane textures equal to the planes",
        nv12.frames,
        p010.frames,
        nv12_checked.pixels + p010_checked.pixels,
        nv12_checked.frames + p010_checked.frames,
        name(nv12.colors[0]),
        name(nv12.colors[1]),
        name(p010.colors[0]),
        name(p010.colors[1]),
        nv12_checked.off_by_one + p010_checked.off_by_one,
        nv12_checked.plane_bytes + p010_checked.plane_bytes,
    ))
}

/// Plays `clip` on `target`: each frame written by the kernel and shown with `show_video`;
/// every [`CHECK_EVERY`]th frame and the last read back and checked.
///
/// # Errors
/// [`Mismatch`] at the first frame that differs from the CPU's; CUDA's and GL's errors.
fn play(
    clip: &Clip,
    target: &mut DisplayTarget,
    pattern: &Function,
    stream: &Stream,
) -> Result<Checked> {
    let layout = clip.layout;
    let ctx = target.context().clone();
    // One frame's planes, as a decoder's output surface; the padding keeps PADDING.
    let mut planes = DeviceBuffer::<u8>::zeroed_on(&ctx, layout.bytes(), stream)?;
    planes.memset_async(PADDING, stream)?;
    let wide = i32::from(layout.format() == VideoFormat::P010);
    let mut checked = Checked::default();
    let mut textures = PlaneTextures::new(&ctx, &layout)?;
    checked.planes_mode = Some(textures.planes.mode());
    for frame in 0..clip.frames {
        // SAFETY: video_test_pattern(unsigned char*, size_t, size_t, size_t, unsigned,
        // unsigned, int, unsigned) writes the samples of `layout`'s planes and nothing else:
        // luma (x, y) at y * luma_pitch + x * bytes for x < width, y < height, and chroma pair
        // (cx, cy) at chroma_offset + cy * chroma_pitch + cx * 2 * bytes, two samples, for
        // cx < ceil(width / 2), cy < ceil(height / 2) (bytes 2 for P010, 1 for NV12). The last
        // of these ends at `layout.bytes()`, the length of `planes`. It reads only its
        // arguments and a table of its own. It runs on `stream`, after the conversion of the
        // previous frame that `show_video` queued there, so it never writes planes being read.
        unsafe {
            pattern.launch(
                LaunchConfig::for_image(layout.width(), layout.height()),
                stream,
                (
                    planes.device_ptr(),
                    layout.luma_pitch(),
                    layout.chroma_offset(),
                    layout.chroma_pitch(),
                    layout.width(),
                    layout.height(),
                    wide,
                    frame,
                ),
            )?;
        }
        // The whole of showing a decoded frame: converted on the GPU, in `stream`'s order.
        let color = clip.color_of(frame);
        target.show_video(&planes, layout, color, stream)?;
        // ... a program of your own draws target.texture() here (row 0 is the video's top
        // row: flip the texture coordinates' v) ...
        // Or the planes as they are, for a shader of one's own.
        textures.planes.upload(&planes, layout, stream)?;

        if frame % CHECK_EVERY != 0 && frame + 1 != clip.frames {
            continue;
        }
        let shown = target.read_pixels()?;
        let bytes = planes.to_vec_on(stream)?;
        let what = format!("{:?} frame {frame}", layout.format());
        if let Some(at) = first_difference(&bytes, &pattern_cpu(&layout, frame)?) {
            bail!(Mismatch(format!(
                "{what}: the planes differ from the CPU's pattern from byte {at} (of {})",
                bytes.len()
            )));
        }
        let want = convert_cpu(&bytes, &layout, color)?;
        checked.off_by_one += compare(&shown, &want, layout.width(), &what)?;
        checked.plane_bytes += textures.check(&bytes, &what)?;
        checked.frames += 1;
        checked.pixels += want.len() / 4;
        checked.last = Some((layout.size(), shown));
    }
    Ok(checked)
}
