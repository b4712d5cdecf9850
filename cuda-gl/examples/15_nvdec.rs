//! 15: a real decoder's frames on screen. NVDEC (`libnvcuvid.so.1`, part of NVIDIA's driver)
//! decodes an H.264 clip into NV12 surfaces in device memory, and `DisplayTarget::show_video_raw`
//! converts each mapped surface to RGBA8 on the GPU where it lies: no copy, no host memory.
//!
//! The clip is the moving test pattern of example 13, 1920x1080, which the example encodes
//! itself without an encoder: every macroblock stored as it is (H.264 `I_PCM`,
//! `common/h264_pcm.rs`), so the decoded frames must equal the frames encoded byte for byte.
//! The stream says it is BT.601 limited range (its VUI); the example takes the colour space
//! from what NVDEC's parser read, as a player does.
//!
//! The check, on every 10th frame and the last: the decoded planes (downloaded from the mapped
//! surface) equal the frame encoded, byte for byte; the texture, read back, is within 1 per
//! channel of `video::convert_cpu` of that frame in every pixel; and every frame came out once,
//! in order.
//!
//! Headless, on any GL, as example 13 (interop mode on NVIDIA's EGL, staged on Mesa's).
//! Exit status 2 (cannot run here) without NVDEC or a GPU whose NVDEC decodes H.264.
//!
//! Run: `cargo run --release -p cuda-gl --example 15_nvdec --features egl`
//! (`-- --screenshot 15.png` keeps the last frame).

#[path = "common/mod.rs"]
mod common;
#[path = "common/h264_pcm.rs"]
mod h264_pcm;
#[path = "common/nvdec.rs"]
mod nvdec;
#[path = "common/video_pattern.rs"]
mod video_pattern;

use anyhow::{Context as _, Result, bail};
use common::Mismatch;
use cuda_gl::display::{DisplayTarget, Format, Layout};
use cuda_gl::video::{
    ColorMatrix, ColorRange, ColorSpace, VideoFormat, VideoFrame, VideoLayout, convert_cpu,
};
use cuda_gl::{Context, DevicePtr, Event, Stream, StreamFlags};
use h264_pcm::{PcmStream, Signal};
use nvdec::Decoded;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use video_pattern::{compare, pattern_cpu};

/// The clip's size and length.
const SIZE: (u32, u32) = (1920, 1080);
const FRAMES: u32 = 30;
/// Every how many frames the texture and the planes are checked (the last frame is too).
const CHECK_EVERY: u32 = 10;
/// What the stream says of its colours: BT.601 (525-line) limited range.
const SIGNAL: Signal = Signal {
    primaries: 6,
    transfer: 6,
    matrix: 6,
    full_range: false,
};

fn main() -> ExitCode {
    common::main(|args| common::outcome_of(run(args)))
}

fn run(args: &common::Args) -> Result<String> {
    let (device, _gl) = common::headless_any_gl(args, "15")?;
    let nv = nvdec::Nvcuvid::open()?;
    let ctx = Context::new(&device)?;
    let stream = Stream::new(&ctx, StreamFlags::NonBlocking)?;

    // The clip: the pattern's frames, packed NV12, each one IDR picture of I_PCM macroblocks.
    let packed = VideoLayout::packed(SIZE, VideoFormat::Nv12)?;
    let encoder = PcmStream::new(SIZE.0, SIZE.1, SIGNAL)?;
    let frames = (0..FRAMES)
        .map(|f| pattern_cpu(&packed, f))
        .collect::<Result<Vec<_>>>()?;
    let mut pictures = Vec::with_capacity(frames.len());
    for (f, frame) in (0..).zip(&frames) {
        // The parameter sets go with the first picture.
        let mut picture = if f == 0 {
            encoder.headers()
        } else {
            Vec::new()
        };
        picture.extend(encoder.frame(f, frame)?);
        pictures.push(picture);
    }
    let clip_bytes: usize = pictures.iter().map(Vec::len).sum();

    let (mut target, report) =
        DisplayTarget::new(&ctx, Layout::packed(SIZE, Format::Rgba8)?, None)?;
    println!("{report}");
    common::check_required_mesa(&report)?;

    let mut checked = Checked::default();
    let packets = (0..).zip(&pictures).map(|(t, p)| (t, p.as_slice()));
    let decoded = nvdec::decode(&nv, &ctx, &stream, packets, &mut |frame| {
        show_and_check(frame, &frames, &mut target, &stream, &mut checked)
    })?;
    if decoded != FRAMES || checked.next != FRAMES {
        bail!(Mismatch(format!(
            "NVDEC gave {decoded} frames ({} in order), not the {FRAMES} encoded",
            checked.next
        )));
    }

    if let (Some(path), Some(pixels)) = (&args.screenshot, &checked.last) {
        gl_kit::image::write_png(path, SIZE.0, SIZE.1, pixels)?;
        println!("wrote {} ({}x{})", path.display(), SIZE.0, SIZE.1);
    }
    let mode = target.mode();
    drop(target);
    ctx.check_drop_errors()?;
    Ok(format!(
        "{mode} mode, {FRAMES} frames of {}x{} H.264 ({clip_bytes} bytes, I_PCM) decoded by \
         NVDEC and shown from its surfaces, as {} (the stream's VUI); {} frames checked: the \
         decoded planes equal the frames encoded byte for byte, {} pixels within 1 of \
         video::convert_cpu ({} channels off by 1)",
        SIZE.0,
        SIZE.1,
        checked
            .color
            .map_or("?".into(), |c| format!("{:?} {:?}", c.matrix, c.range)),
        checked.frames,
        checked.pixels,
        checked.off_by_one,
    ))
}

/// What the checks found.
#[derive(Default)]
struct Checked {
    /// The frame expected next (frames come out in order).
    next: u32,
    frames: u32,
    pixels: usize,
    off_by_one: usize,
    color: Option<ColorSpace>,
    /// The last frame checked, read back: RGBA8, row 0 (the video's top row) first.
    last: Option<Vec<u8>>,
}

/// Shows one decoded frame from NVDEC's surface, and checks it when it is due.
///
/// # Errors
/// [`Mismatch`] for a frame out of order or unlike the one encoded; CUDA's and GL's errors.
fn show_and_check(
    frame: &Decoded,
    frames: &[Vec<u8>],
    target: &mut DisplayTarget,
    stream: &Stream,
    checked: &mut Checked,
) -> Result<()> {
    let index = u32::try_from(frame.timestamp).context("a negative timestamp")?;
    if index != checked.next || frame.size != SIZE {
        bail!(Mismatch(format!(
            "NVDEC gave frame {index} ({:?}) where frame {} ({SIZE:?}) was due",
            frame.size, checked.next
        )));
    }
    checked.next += 1;
    let color = color_space(frame)?;
    checked.color = Some(color);
    // The surface as it lies: luma rows at NVDEC's pitch, the chroma rows after them.
    let layout = VideoLayout::with_chroma(
        frame.size,
        VideoFormat::Nv12,
        frame.pitch,
        frame.chroma_offset,
        frame.pitch,
    )?;
    let surface = VideoFrame::new(DevicePtr::from_raw(frame.ptr), layout);
    // SAFETY: (1) the surface is NVDEC's output, mapped in the target's context with `stream`
    // as its output stream: `layout`'s bytes from `frame.ptr` (the chroma rows follow the
    // luma's at the same pitch, as NVDEC lays NV12 out). `nvdec::decode` keeps it mapped, and
    // NVDEC writes it no more, until the work queued on `stream` by now has run.
    unsafe { target.show_video_raw(&surface, color, stream)? };

    if index % CHECK_EVERY != 0 && index + 1 != FRAMES {
        return Ok(());
    }
    let shown = target.read_pixels()?;
    let encoded = &frames[index as usize];
    let planes = download(frame, &layout, target.context(), stream)?;
    let what = format!("frame {index}");
    check_planes(&planes, &layout, encoded, &what)?;
    let packed = VideoLayout::packed(SIZE, VideoFormat::Nv12)?;
    let want = convert_cpu(encoded, &packed, color)?;
    checked.off_by_one += compare(&shown, &want, SIZE.0, &what)?;
    checked.frames += 1;
    checked.pixels += want.len() / 4;
    checked.last = Some(shown);
    Ok(())
}

/// The colour space the stream's VUI gave NVDEC's parser (ITU-T H.273 code points).
///
/// # Errors
/// For a matrix this example does not expect.
fn color_space(frame: &Decoded) -> Result<ColorSpace> {
    let matrix = match frame.matrix {
        1 => ColorMatrix::Bt709,
        5 | 6 => ColorMatrix::Bt601,
        9 => ColorMatrix::Bt2020,
        other => bail!("matrix_coefficients {other} in the stream: not one this example writes"),
    };
    let range = if frame.full_range {
        ColorRange::Full
    } else {
        ColorRange::Limited
    };
    Ok(ColorSpace::new(matrix, range))
}

/// The decoded surface's `layout.bytes()` bytes, copied to the host once the work queued on
/// `stream` (NVDEC's post-processing, the conversion) has run.
///
/// # Errors
/// CUDA's errors.
fn download(
    frame: &Decoded,
    layout: &VideoLayout,
    ctx: &Arc<Context>,
    stream: &Stream,
) -> Result<Vec<u8>> {
    let done = Event::new(ctx, false)?;
    done.record(stream)?;
    done.wait_for(Duration::from_secs(10))?;
    ctx.bind()?;
    let mut bytes = vec![0u8; layout.bytes()];
    let driver = cuda_gl::sys::driver()?;
    // SAFETY: `bytes` has room for `layout.bytes()` bytes; the surface holds them (mapped by
    // `nvdec::decode` for the duration of the callback, see `show_and_check`), in the current
    // context, and nothing writes it any more (the stream is done).
    let copied =
        unsafe { driver.cuMemcpyDtoH_v2(bytes.as_mut_ptr().cast(), frame.ptr, bytes.len()) };
    if !copied.is_success() {
        bail!("cuMemcpyDtoH: {copied:?}");
    }
    Ok(bytes)
}

/// Compares the decoded planes (at NVDEC's pitch) with the packed NV12 frame encoded, row by
/// row.
///
/// # Errors
/// [`Mismatch`] at the first row that differs.
fn check_planes(planes: &[u8], layout: &VideoLayout, encoded: &[u8], what: &str) -> Result<()> {
    let (w, h) = (SIZE.0 as usize, SIZE.1 as usize);
    let rows = (0..h)
        .map(|y| ("luma", y, y * layout.luma_pitch(), y * w))
        .chain((0..h / 2).map(|y| {
            let at = layout.chroma_offset() + y * layout.chroma_pitch();
            ("chroma", y, at, w * h + y * w)
        }));
    for (plane, y, at, want_at) in rows {
        let got = planes
            .get(at..at + w)
            .context("a row outside the surface")?;
        let want = encoded
            .get(want_at..want_at + w)
            .context("a row outside the frame")?;
        if got != want {
            bail!(Mismatch(format!(
                "{what}: decoded {plane} row {y} differs from the row encoded (lossless I_PCM)"
            )));
        }
    }
    Ok(())
}
