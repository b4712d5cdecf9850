//! 15: a real decoder's frames on screen. NVDEC (`libnvcuvid.so.1`, part of NVIDIA's driver)
//! decodes two clips into surfaces in device memory, and `DisplayTarget::show_video_raw`
//! converts each mapped surface to RGBA8 on the GPU where it lies: no copy, no host memory.
//!
//! The clips are the moving test pattern of example 13, which the example encodes itself,
//! without an encoder, storing every block's samples as they are (so the decoded frames must
//! equal the frames encoded exactly):
//! - 8-bit NV12 as H.264 at 1920x1080, `I_PCM` macroblocks (`common/h264_pcm.rs`), its VUI
//!   saying BT.601 limited range;
//! - 10-bit P010 as HEVC Main 10 at 1282x722, PCM coding units (`common/hevc_pcm.rs`; NVDEC
//!   decodes 10-bit video from HEVC), its VUI saying BT.2020 full range.
//!
//! The example takes each frame's colour space from what NVDEC's parser read in the stream, as
//! a player does, and checks that it read what was written.
//!
//! Each surface also goes, as it is, into two GL textures of the program's (R8 + RG8, or R16 +
//! RG16) through `VideoPlanes::upload_raw`: the planes for a shader of one's own.
//!
//! The check: every frame comes out once, in order, and its decoded planes (downloaded from the
//! mapped surface) equal the frame encoded (for P010, each sample's 10 bits); on every 10th
//! frame and the last, the texture, read back, is within 1 per channel of `video::convert_cpu`
//! of that frame in every pixel, and the plane textures hold NVDEC's planes byte for byte.
//!
//! Headless, on any GL, as example 13 (interop mode on NVIDIA's EGL, staged on Mesa's). Both
//! clips are played whatever the first found, each with a line of its own. Exit status 2
//! (cannot run here) without NVDEC, or on a GPU whose NVDEC decodes neither clip (one it does
//! not decode is said in the last line).
//!
//! Run: `cargo run --release -p cuda-gl --example 15_nvdec --features egl`
//! (`-- --screenshot 15.png` keeps the last 1080p frame).

#[path = "common/bitstream.rs"]
mod bitstream;
#[path = "common/mod.rs"]
mod common;
#[path = "common/h264_pcm.rs"]
mod h264_pcm;
#[path = "common/hevc_pcm.rs"]
mod hevc_pcm;
#[path = "common/nvdec.rs"]
mod nvdec;
#[path = "common/plane_textures.rs"]
mod plane_textures;
#[path = "common/video_pattern.rs"]
mod video_pattern;

use anyhow::{Context as _, Result, bail};
use bitstream::Signal;
use common::{Mismatch, Unavailable};
use cuda_gl::display::{DisplayTarget, Format, Layout};
use cuda_gl::video::{
    ColorMatrix, ColorRange, ColorSpace, VideoFormat, VideoFrame, VideoLayout, convert_cpu,
};
use cuda_gl::{Context, DevicePtr, Event, Stream, StreamFlags};
use h264_pcm::PcmStream;
use hevc_pcm::HevcPcmStream;
use nvdec::{Codec, Decoded, Nvcuvid};
use plane_textures::PlaneTextures;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use video_pattern::{compare, pattern_cpu};

/// Every how many frames the texture is checked (the last frame is too).
const CHECK_EVERY: u32 = 10;

/// One clip: its codec, size, length, and what its VUI says of its colours.
struct Clip {
    codec: Codec,
    size: (u32, u32),
    frames: u32,
    signal: Signal,
}

/// The 10-bit clip first, so that the last frame shown (and the screenshot) is the 1080p one.
const CLIPS: [Clip; 2] = [
    Clip {
        codec: Codec::HevcMain10,
        size: (1282, 722),
        frames: 20,
        signal: Signal::BT2020_FULL,
    },
    Clip {
        codec: Codec::H264,
        size: (1920, 1080),
        frames: 30,
        signal: Signal::BT601_LIMITED,
    },
];

fn main() -> ExitCode {
    common::main(|args| common::outcome_of(run(args)))
}

fn run(args: &common::Args) -> Result<String> {
    let (device, _gl) = common::headless_any_gl(args, "15")?;
    let nv = Nvcuvid::open()?;
    let ctx = Context::new(&device)?;
    let stream = Stream::new(&ctx, StreamFlags::NonBlocking)?;
    let (mut target, report) =
        DisplayTarget::new(&ctx, Layout::packed(CLIPS[0].size, Format::Rgba8)?, None)?;
    println!("{report}");
    common::check_required_mesa(&report)?;

    // Every clip is played whatever the one before found, so that one run tells of both.
    let (mut lines, mut failures, mut last) = (Vec::new(), Vec::new(), None);
    for clip in &CLIPS {
        match play(clip, &nv, &mut target, &stream) {
            Ok((checked, line)) => {
                println!("{:?}: ok", clip.codec);
                lines.push(line);
                last = checked.last.or(last);
            }
            Err(e) if e.downcast_ref::<Unavailable>().is_some() => {
                println!("{:?}: cannot run here: {e:#}", clip.codec);
                lines.push(format!("{:?}: not decoded here ({e:#})", clip.codec));
            }
            Err(e) => {
                println!("{:?}: {e:#}", clip.codec);
                failures.push(e);
            }
        }
    }
    if let Some(first) = failures.into_iter().next() {
        return Err(first);
    }
    if last.is_none() {
        bail!(Unavailable(format!(
            "this GPU's NVDEC decodes neither clip: {}",
            lines.join("; ")
        )));
    }
    if let (Some(path), Some(((w, h), pixels))) = (&args.screenshot, &last) {
        // Row 0 is the video's top row: the PNG's first row as it is.
        gl_kit::image::write_png(path, *w, *h, pixels)?;
        println!("wrote {} ({w}x{h})", path.display());
    }
    let mode = target.mode();
    drop(target);
    ctx.check_drop_errors()?;
    Ok(format!(
        "{mode} mode; NVDEC's mapped surfaces shown with show_video_raw: {}",
        lines.join("; ")
    ))
}

/// What the checks of one clip found.
#[derive(Default)]
struct Checked {
    /// The frame expected next (frames come out in order).
    next: u32,
    /// Frames whose texture was read back, and their pixels.
    shown: u32,
    pixels: usize,
    off_by_one: usize,
    /// The last frame read back: its size and RGBA8 pixels, row 0 (the video's top row) first.
    last: Option<((u32, u32), Vec<u8>)>,
    /// The planes as textures, made at the first frame (for NVDEC's layout), and the bytes of
    /// them compared.
    planes: Option<PlaneTextures>,
    plane_bytes: usize,
}

/// What every decoded frame of a clip is checked against, made once for the clip: the frames
/// encoded, packed, their layout and colour space (the one its VUI names), and the event each
/// frame's download waits on.
struct Expected {
    frames: Vec<Vec<u8>>,
    packed: VideoLayout,
    color: ColorSpace,
    /// Recorded on the stream after a frame's work, waited for before its planes' download.
    done: Event,
}

/// Encodes `clip`, decodes it on NVDEC and shows and checks every frame. Returns what was
/// checked, and a line saying so.
///
/// # Errors
/// [`Mismatch`] at the first frame unlike the one encoded; NVDEC's, CUDA's and GL's errors.
fn play(
    clip: &Clip,
    nv: &Nvcuvid,
    target: &mut DisplayTarget,
    stream: &Stream,
) -> Result<(Checked, String)> {
    let packed = VideoLayout::packed(clip.size, clip.codec.format())?;
    let frames = (0..clip.frames)
        .map(|f| pattern_cpu(&packed, f))
        .collect::<Result<Vec<_>>>()?;
    let pictures = encode(clip, &frames)?;
    let clip_bytes: usize = pictures.iter().map(Vec::len).sum();
    let ctx = target.context().clone();
    let expected = Expected {
        frames,
        packed,
        color: color_space(&clip.signal)?,
        done: Event::new(&ctx, false)?,
    };
    let mut checked = Checked::default();
    let packets = (0..).zip(&pictures).map(|(t, p)| (t, p.as_slice()));
    let decoded = nvdec::decode(nv, clip.codec, &ctx, stream, packets, &mut |frame| {
        show_and_check(clip, frame, &expected, target, stream, &mut checked)
    })?;
    if decoded.frames != clip.frames || checked.next != clip.frames {
        bail!(Mismatch(format!(
            "{:?}: NVDEC decoded {} pictures and displayed {} frames ({} in order), not the {} \
             encoded",
            clip.codec, decoded.pictures, decoded.frames, checked.next, clip.frames
        )));
    }
    let line = format!(
        "{} frames of {:?} {}x{} ({clip_bytes} bytes), each one's planes equal to the frame \
         encoded, shown as {} (the stream's VUI), {} pixels of {} frames within 1 of \
         video::convert_cpu ({} channels off by 1); VideoPlanes in {} mode, {} bytes of plane \
         textures equal to NVDEC's planes",
        clip.frames,
        clip.codec,
        clip.size.0,
        clip.size.1,
        name(expected.color),
        checked.pixels,
        checked.shown,
        checked.off_by_one,
        checked
            .planes
            .as_ref()
            .map_or("no".into(), |p| p.planes.mode().to_string()),
        checked.plane_bytes
    );
    Ok((checked, line))
}

/// The clip's pictures: each frame one IDR picture, the parameter sets before the first.
///
/// # Errors
/// The stream writer's (a size it cannot code).
fn encode(clip: &Clip, frames: &[Vec<u8>]) -> Result<Vec<Vec<u8>>> {
    let (w, h) = clip.size;
    match clip.codec {
        Codec::H264 => {
            let s = PcmStream::new(w, h, clip.signal)?;
            pictures(s.headers(), frames, |f, bytes| s.frame(f, bytes))
        }
        Codec::HevcMain10 => {
            let s = HevcPcmStream::new(w, h, clip.signal)?;
            pictures(s.headers(), frames, |_, bytes| s.frame(bytes))
        }
    }
}

/// Each of `frames` as a picture by `frame`, `headers` before the first.
///
/// # Errors
/// `frame`'s.
fn pictures(
    headers: Vec<u8>,
    frames: &[Vec<u8>],
    frame: impl Fn(u32, &[u8]) -> Result<Vec<u8>>,
) -> Result<Vec<Vec<u8>>> {
    let mut pictures = Vec::with_capacity(frames.len());
    let mut first = Some(headers);
    for (f, bytes) in (0..).zip(frames) {
        let mut picture = first.take().unwrap_or_default();
        picture.extend(frame(f, bytes)?);
        pictures.push(picture);
    }
    Ok(pictures)
}

/// Shows one decoded frame from NVDEC's surface, checks its planes, and, when due, the texture.
///
/// # Errors
/// [`Mismatch`] for a frame out of order or unlike the one encoded, or a colour description
/// other than the one written; CUDA's and GL's errors.
fn show_and_check(
    clip: &Clip,
    frame: &Decoded,
    expected: &Expected,
    target: &mut DisplayTarget,
    stream: &Stream,
    checked: &mut Checked,
) -> Result<()> {
    let what = format!("{:?} frame {}", clip.codec, frame.timestamp);
    let index = u32::try_from(frame.timestamp)
        .ok()
        .filter(|&i| i == checked.next);
    let (Some(index), Some(encoded)) = (index, expected.frames.get(checked.next as usize)) else {
        bail!(Mismatch(format!(
            "{what}: NVDEC gave this frame where frame {} was due",
            checked.next
        )));
    };
    checked.next += 1;
    let (wrote, read) = (clip.signal, frame.signal);
    if read != wrote {
        bail!(Mismatch(format!(
            "{what}: NVDEC's parser read the colour description {read:?}, not the {wrote:?} \
             written"
        )));
    }
    if frame.size != clip.size || frame.format != clip.codec.format() {
        bail!(Mismatch(format!(
            "{what}: NVDEC gave a {:?} {:?} frame, not {:?} {:?}",
            frame.format,
            frame.size,
            clip.codec.format(),
            clip.size
        )));
    }
    let color = expected.color;
    // The surface as it lies: luma rows at NVDEC's pitch, the chroma rows after them.
    let layout = VideoLayout::with_chroma(
        frame.size,
        frame.format,
        frame.pitch,
        frame.chroma_offset,
        frame.pitch,
    )?;
    let surface = VideoFrame::new(DevicePtr::from_raw(frame.ptr), layout);
    // SAFETY: (1) the surface is NVDEC's output, mapped in the target's context with `stream`
    // as its output stream: `layout`'s bytes from `frame.ptr` (the chroma rows follow the
    // luma's at the same pitch, as NVDEC lays NV12 and P016 out). `nvdec::decode` keeps it
    // mapped, and NVDEC writes it no more, until the work queued on `stream` by now has run.
    unsafe { target.show_video_raw(&surface, color, stream)? };
    // And the planes as they are, into textures of the program's.
    let textures = match &mut checked.planes {
        Some(textures) => textures,
        none => none.insert(PlaneTextures::new(target.context(), &layout)?),
    };
    // SAFETY: (1) as `show_video_raw`'s above: the same surface, mapped until the work queued
    // on `stream` by now has run.
    unsafe { textures.planes.upload_raw(&surface, stream)? };

    let planes = download(frame, &layout, &expected.done, target.context(), stream)?;
    check_planes(&planes, &layout, encoded, &what)
        .map_err(|e| e.context(format!("{what}: {}", frame.layout_text())))?;
    if index % CHECK_EVERY != 0 && index + 1 != clip.frames {
        return Ok(());
    }
    checked.plane_bytes += textures.check(&planes, &what)?;
    let shown = target.read_pixels()?;
    let want = convert_cpu(encoded, &expected.packed, color)?;
    checked.off_by_one += compare(&shown, &want, clip.size.0, &what)?;
    checked.shown += 1;
    checked.pixels += want.len() / 4;
    checked.last = Some((clip.size, shown));
    Ok(())
}

/// The colour space a VUI's code points name (ITU-T H.273: matrix 1 BT.709, 5 and 6 BT.601, 9
/// BT.2020 non-constant luminance).
///
/// # Errors
/// For a matrix this example does not write.
fn color_space(signal: &Signal) -> Result<ColorSpace> {
    let matrix = match signal.matrix {
        1 => ColorMatrix::Bt709,
        5 | 6 => ColorMatrix::Bt601,
        9 => ColorMatrix::Bt2020,
        other => bail!("matrix_coefficients {other}: not one this example writes"),
    };
    let range = if signal.full_range {
        ColorRange::Full
    } else {
        ColorRange::Limited
    };
    Ok(ColorSpace::new(matrix, range))
}

/// "bt601 limited", say.
fn name(color: ColorSpace) -> String {
    format!("{:?} {:?}", color.matrix, color.range).to_lowercase()
}

/// The decoded surface's `layout.bytes()` bytes, copied to the host once the work queued on
/// `stream` (NVDEC's post-processing, the conversion) has run: `done`, recorded after it,
/// waited for at most 10 s.
///
/// # Errors
/// CUDA's errors.
fn download(
    frame: &Decoded,
    layout: &VideoLayout,
    done: &Event,
    ctx: &Arc<Context>,
    stream: &Stream,
) -> Result<Vec<u8>> {
    done.record(stream)?;
    done.wait_for(Duration::from_secs(10))?;
    ctx.bind()?;
    let mut bytes = vec![0u8; layout.bytes()];
    let driver = cuda_gl::sys::driver()?;
    // SAFETY: `bytes` has room for `layout.bytes()` bytes; the surface holds them (mapped by
    // `nvdec::decode` for the duration of the callback, see `show_and_check`), in the current
    // context, and nothing writes it any more (the stream's work is done).
    let copied =
        unsafe { driver.cuMemcpyDtoH_v2(bytes.as_mut_ptr().cast(), frame.ptr, bytes.len()) };
    if !copied.is_success() {
        bail!("cuMemcpyDtoH: {copied:?}");
    }
    Ok(bytes)
}

/// Compares the decoded planes (at NVDEC's pitch) with the packed frame encoded, row by row:
/// bytes for NV12, each word's top 10 bits for P010 (the encoder stored those; NVDEC leaves
/// the low 6 bits 0, the frame encoded has junk there).
///
/// # Errors
/// [`Mismatch`] at the first row that differs.
fn check_planes(planes: &[u8], layout: &VideoLayout, encoded: &[u8], what: &str) -> Result<()> {
    let (w, h) = (layout.width() as usize, layout.height() as usize);
    let row = w * layout.format().bytes_per_sample();
    let luma_rows = (0..h).map(|y| ("luma", y, y * layout.luma_pitch(), y * row));
    let chroma_rows = (0..h / 2).map(|y| {
        let at = layout.chroma_offset() + y * layout.chroma_pitch();
        ("chroma", y, at, h * row + y * row)
    });
    let ten_bits = |bytes: &[u8]| -> Vec<u16> {
        bytes
            .chunks_exact(2)
            .map(|w| u16::from_le_bytes([w[0], w[1]]) >> 6)
            .collect()
    };
    let samples = |bytes: &[u8]| -> Vec<u16> {
        match layout.format() {
            VideoFormat::P010 => ten_bits(bytes),
            _ => bytes.iter().map(|&b| u16::from(b)).collect(),
        }
    };
    for (plane, y, at, want_at) in luma_rows.chain(chroma_rows) {
        let got = planes
            .get(at..at + row)
            .context("a row outside the surface")?;
        let want = encoded
            .get(want_at..want_at + row)
            .context("a row outside the frame")?;
        let (got, want) = (samples(got), samples(want));
        if let Some(x) = got.iter().zip(&want).position(|(g, w)| g != w) {
            // Where the row encoded lies in the surface, if anywhere: a wrong pitch or chroma
            // offset shows as a row found elsewhere.
            let pitch = layout.luma_pitch();
            let found = (0..planes.len() / pitch).find(|r| {
                let at = r * pitch;
                planes
                    .get(at..at + row)
                    .is_some_and(|bytes| samples(bytes) == want)
            });
            let found = found.map_or("is nowhere in the surface".into(), |r| {
                format!("is at the surface's row {r}")
            });
            bail!(Mismatch(format!(
                "{what}: decoded {plane} row {y} differs from the row encoded (lossless PCM) \
                 from sample {x}: {} where {} was written (10-bit values for P010); the row \
                 encoded {found}",
                got[x], want[x]
            )));
        }
    }
    Ok(())
}
