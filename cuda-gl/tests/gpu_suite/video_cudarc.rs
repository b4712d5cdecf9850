//! cudarc memory as decoded video (feature `cudarc`): NV12 and P010 frames in a `CudaSlice` of
//! bytes and in a `CudaView` of 16-bit words (at an offset into its slice) shown on a display
//! target in every mode (`DisplayTarget::show_video_cudarc`), every pixel within 1 of
//! `video::convert_cpu`, and uploaded into video planes in every mode
//! (`VideoPlanes::upload_cudarc`), byte for byte; a frame shorter than its layout, in memory of
//! another cudarc context, or with a stream of another CUDA context, refused with the texture or
//! planes as they were; and cudarc's write of the frame's memory on another stream, queued right
//! after the call, waiting for the call's reads, which a kernel spinning on the caller's stream
//! holds up (cudarc's read event, recorded after them). The cudarc streams are of device 0's
//! primary context, which the test GPU's `Context` retains too: one CUDA context. Needs
//! `--features egl,cudarc` and a GPU.
#![cfg(all(feature = "egl", feature = "cudarc"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::video::{check_video_shown, frames};
use super::video_planes::{MODES, Planes};
use crate::gpu::*;
use cuda_gl::cudarc_interop::CudarcSource;
use cuda_gl::display::{DisplayTarget, Format, Mode};
use cuda_gl::video::{
    ColorMatrix, ColorRange, ColorSpace, VideoError, VideoFormat, VideoLayout, VideoPlanes,
};
use cuda_gl::{DeviceBuffer, Error, LaunchConfig, UsageError};
use cudarc::driver::{CudaContext, CudaEvent, CudaSlice, CudaStream};
use std::sync::Arc;
use std::time::Duration;

/// The display target's modes on NVIDIA's GL.
const DISPLAY_MODES: [Mode; 3] = [Mode::Interop, Mode::Staged, Mode::Stream];

/// The values of `T` before the frame in the slice a view is taken of.
const LEAD: usize = 24;

/// A cudarc context on device 0 (its primary context, the test GPU's) and two of its streams:
/// the caller's and another. (A stream of its own puts cudarc in its multi-stream mode, where it
/// tracks each slice's reads and writes with events.)
fn cudarc_streams() -> (Arc<CudaContext>, Arc<CudaStream>, Arc<CudaStream>) {
    let cu = CudaContext::new(0).expect("cudarc context on device 0");
    let (s, u) = (cu.new_stream().unwrap(), cu.new_stream().unwrap());
    (cu, s, u)
}

/// `bytes` as little-endian 16-bit words, behind [`LEAD`] words of noise, in a slice on `s`.
fn words_after_a_lead(s: &Arc<CudaStream>, bytes: &[u8]) -> CudaSlice<u16> {
    let lead = noise(LEAD * 2, 7).into_iter();
    let all: Vec<u8> = lead.chain(bytes.iter().copied()).collect();
    let words: Vec<u16> = all
        .chunks_exact(2)
        .map(|pair| u16::from_le_bytes([pair[0], pair[1]]))
        .collect();
    s.clone_htod(&words).unwrap()
}

/// The odd frame of `format` (1001x333, padded pitches, the chroma after a gap) and its bytes
/// (`seed`), a whole number of 16-bit words.
fn odd_frame(format: VideoFormat, seed: u64) -> (VideoLayout, Vec<u8>) {
    let (layout, _) = frames(format)[1];
    (layout, noise(layout.bytes().next_multiple_of(2), seed))
}

/// The texture of `target`, read back, is `bytes` (a frame of `layout`) converted under
/// `color` by the CPU, within 1 per channel.
fn assert_shows(
    target: &mut DisplayTarget,
    bytes: &[u8],
    layout: VideoLayout,
    color: ColorSpace,
    what: &str,
) {
    assert_eq!(
        (target.size(), target.format()),
        (layout.size(), Format::Rgba8),
        "{what}"
    );
    let got = target.read_pixels().unwrap();
    check_video_shown(&got, (bytes, layout), color, what);
}

/// Shows `src` (a frame of `layout` whose bytes are `bytes`) on `target` under `color` on `s`,
/// then checks what the target shows ([`assert_shows`]).
fn show_and_check<T, Src: CudarcSource<T>>(
    target: &mut DisplayTarget,
    src: &Src,
    (bytes, layout): (&[u8], VideoLayout),
    (color, s): (ColorSpace, &Arc<CudaStream>),
    what: &str,
) {
    target.show_video_cudarc(src, layout, color, s).unwrap();
    assert_shows(target, bytes, layout, color, what);
}

/// NV12 and P010 frames in a slice of bytes and in a view of words shown on a target in every
/// mode equal the CPU's conversion, within 1 per channel.
#[test]
fn cudarc_video_frames_shown_match_the_cpu_in_every_mode() {
    let Some(g) = gpu() else { return };
    let (_cu, s, _u) = cudarc_streams();
    let color = ColorSpace::new(ColorMatrix::Bt2020, ColorRange::Full);
    for mode in DISPLAY_MODES {
        let (mut target, report) = display_target(&g.ctx, (16, 16), Some(mode));
        assert_eq!(report.mode, mode, "{report}");
        for (n, format) in [VideoFormat::Nv12, VideoFormat::P010]
            .into_iter()
            .enumerate()
        {
            let (layout, bytes) = odd_frame(format, 500 + n as u64);
            let slice = s.clone_htod(&bytes).unwrap();
            let what = format!("{mode} {format:?} CudaSlice<u8>");
            show_and_check(&mut target, &slice, (&bytes, layout), (color, &s), &what);
            let (layout, bytes) = odd_frame(format, 600 + n as u64);
            let words = words_after_a_lead(&s, &bytes);
            let view = words.slice(LEAD..);
            let what = format!("{mode} {format:?} CudaView<u16>");
            show_and_check(&mut target, &view, (&bytes, layout), (color, &s), &what);
        }
    }
    g.check_no_errors();
}

/// NV12 and P010 frames in a slice of bytes and in a view of words reach the planes' textures
/// byte for byte, in every mode of the planes.
#[test]
fn cudarc_video_frames_reach_the_planes_byte_for_byte_in_every_mode() {
    let Some(g) = gpu() else { return };
    let (_cu, s, _u) = cudarc_streams();
    for mode in MODES {
        for (n, format) in [VideoFormat::Nv12, VideoFormat::P010]
            .into_iter()
            .enumerate()
        {
            let (layout, bytes) = odd_frame(format, 700 + n as u64);
            let planes = Planes::new(layout);
            let mut registered = planes.register(&g, mode).unwrap();
            let slice = s.clone_htod(&bytes).unwrap();
            registered.upload_cudarc(&slice, layout, &s).unwrap();
            planes.assert_hold(&bytes, &format!("{mode} {format:?} CudaSlice<u8>"));
            let (_, bytes) = odd_frame(format, 800 + n as u64);
            let words = words_after_a_lead(&s, &bytes);
            registered
                .upload_cudarc(&words.slice(LEAD..), layout, &s)
                .unwrap();
            planes.assert_hold(&bytes, &format!("{mode} {format:?} CudaView<u16>"));
            drop(registered);
        }
    }
    g.check_no_errors();
}

/// What a refused call was given: (what, the call's result).
type Refusal = (&'static str, cuda_gl::Result<()>);

/// Asserts that each refusal is its error: the short frame `FrameTooSmall`, the others
/// `WrongCudaContext` naming the stream or the cudarc memory.
fn assert_refusals(refusals: Vec<Refusal>, mode: Mode) {
    for (what, result) in refusals {
        eprintln!("{mode} {what}: {result:?}");
        match what {
            "short" => assert!(
                matches!(result, Err(Error::Video(VideoError::FrameTooSmall { .. }))),
                "{mode} {what}: {result:?}"
            ),
            _ => assert_refused(
                result,
                |e| matches!(e, UsageError::WrongCudaContext { what: w, .. } if *w == what),
                "",
            ),
        }
    }
}

/// The three frames each call refuses, by what its error names: `"short"` (a byte too few for
/// `layout`), `"cudarc memory"` (a slice of another `CudaContext` of the device, with a stream
/// of the first) and `"stream"` (a stream and slice of a non-primary context of the device:
/// another CUDA context than the target's or the planes'). `call` makes the call.
fn refused_calls(
    layout: VideoLayout,
    s: &Arc<CudaStream>,
    mut call: impl FnMut(&CudaSlice<u8>, &Arc<CudaStream>) -> cuda_gl::Result<()>,
) -> Vec<Refusal> {
    let short = s.alloc_zeros::<u8>(layout.bytes() - 1).unwrap();
    let other = CudaContext::new(0).unwrap().new_stream().unwrap();
    let elsewhere = other.alloc_zeros::<u8>(layout.bytes()).unwrap();
    let apart = CudaContext::new_non_primary(0, 0)
        .expect("a non-primary cudarc context on device 0")
        .new_stream()
        .unwrap();
    let apart_frame = apart.alloc_zeros::<u8>(layout.bytes()).unwrap();
    vec![
        ("short", call(&short, s)),
        ("cudarc memory", call(&elsewhere, s)),
        ("stream", call(&apart_frame, &apart)),
    ]
}

/// A frame too short, in memory of another cudarc context, or with a stream of another CUDA
/// context, is refused by `show_video_cudarc` in every mode and by `upload_cudarc` in every mode
/// of the planes, each with its error, with the texture or planes as they were.
#[test]
fn cudarc_frames_too_short_or_of_another_context_are_refused_with_nothing_written() {
    let Some(g) = gpu() else { return };
    let (_cu, s, _u) = cudarc_streams();
    let layout = VideoLayout::packed((64, 36), VideoFormat::Nv12).unwrap();
    let bytes = noise(layout.bytes(), 900);
    let good = s.clone_htod(&bytes).unwrap();
    let color = ColorSpace::default();
    for mode in DISPLAY_MODES {
        let (mut target, _) = display_target(&g.ctx, (16, 16), Some(mode));
        target.show_video_cudarc(&good, layout, color, &s).unwrap();
        let before = target.read_pixels().unwrap();
        let refusals = refused_calls(layout, &s, |src, stream| {
            target.show_video_cudarc(src, layout, color, stream)
        });
        assert_refusals(refusals, mode);
        assert_eq!(
            target.read_pixels().unwrap(),
            before,
            "{mode}: a refused show drew"
        );
    }
    for mode in MODES {
        let planes = Planes::new(layout);
        let mut registered = planes.register(&g, mode).unwrap();
        registered.upload_cudarc(&good, layout, &s).unwrap();
        let refusals = refused_calls(layout, &s, |src, stream| {
            registered.upload_cudarc(src, layout, stream)
        });
        assert_refusals(refusals, mode);
        planes.assert_hold(&bytes, &format!("{mode}: after the refused uploads"));
        drop(registered);
    }
    g.check_no_errors();
}

/// How long the caller's stream is held up before the call's reads.
const HOLD: Duration = Duration::from_millis(1500);

/// A kernel spinning for [`HOLD`] on `s` (the test kernels' `ext_fill_u32_slow`, writing
/// `out`), and an event of `s` after it.
fn hold_up(g: &Gpu, out: &DeviceBuffer<u32>, s: &Arc<CudaStream>) -> CudaEvent {
    let fill = g.kernels.function("ext_fill_u32_slow").unwrap();
    let n = out.len() as u32;
    // SAFETY: the kernel writes the `n` words of `out`, which the test keeps until `s` is
    // synchronized; `s` is of the kernels' context (device 0's primary context); the arguments
    // match `ext_fill_u32_slow(unsigned*, unsigned, unsigned, unsigned long long)`.
    unsafe {
        fill.launch(
            LaunchConfig::for_elements(n),
            s,
            (out.device_ptr(), n, 1u32, HOLD.as_nanos() as u64),
        )
    }
    .unwrap();
    s.record_event(None).unwrap()
}

/// Calls `read` (a call reading `slice` on `s`) while a kernel holds `s` up, then zeroes
/// `slice` on `u` at once: cudarc's write must wait for the call's reads, which see the frame.
/// Where the call returns with its reads only queued (`queued`: the interop modes), the kernel
/// must still spin when the write is queued, or the test proves nothing. Elsewhere (the staged
/// and stream modes) the call waits on the CPU for its reads, so this passes whether cudarc's
/// read event was recorded or not: there the lib tests
/// `upload_cudarc_records_cudarcs_read_event_after_its_last_read_in_every_mode` and
/// `show_video_cudarc_records_cudarcs_read_event_after_its_conversion_in_every_mode` check the
/// record's place among what the call queued. The caller made the
/// call once before (its kernel loaded, its objects made), so that nothing done only at a first
/// call can wait for the kernel.
fn write_after<T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
    g: &Gpu,
    slice: &mut CudaSlice<T>,
    (s, u): (&Arc<CudaStream>, &Arc<CudaStream>),
    queued: bool,
    read: impl FnOnce(&CudaSlice<T>),
) {
    let out = DeviceBuffer::<u32>::zeroed(&g.ctx, 256).unwrap();
    let spun = hold_up(g, &out, s);
    read(slice);
    u.memset_zeros(slice).unwrap();
    let still_spinning = !spun.is_complete();
    u.synchronize().unwrap();
    s.synchronize().unwrap();
    if queued {
        assert!(
            still_spinning,
            "the test was too slow to check anything: the kernel that spins for {HOLD:?} had \
             ended when cudarc's write was queued"
        );
    }
}

/// cudarc's write of a frame's slice on another stream, queued right after
/// `show_video_cudarc` (whose conversion a kernel holds up), waits for the conversion: the
/// target shows the frame, not zeroes, in every mode.
#[test]
fn a_cudarc_write_after_show_video_cudarc_waits_for_its_conversion() {
    let Some(g) = gpu() else { return };
    let (_cu, s, u) = cudarc_streams();
    let layout = VideoLayout::packed((256, 128), VideoFormat::Nv12).unwrap();
    let color = ColorSpace::default();
    for mode in DISPLAY_MODES {
        let (mut target, _) = display_target(&g.ctx, layout.size(), Some(mode));
        let bytes = noise(layout.bytes(), 1000);
        let mut slice = s.clone_htod(&bytes).unwrap();
        target.show_video_cudarc(&slice, layout, color, &s).unwrap();
        s.synchronize().unwrap();
        write_after(&g, &mut slice, (&s, &u), mode == Mode::Interop, |src| {
            target.show_video_cudarc(src, layout, color, &s).unwrap();
        });
        assert_shows(
            &mut target,
            &bytes,
            layout,
            color,
            &format!("{mode}: written after"),
        );
    }
    g.check_no_errors();
}

/// cudarc's write of a frame's slice on another stream, queued right after `upload_cudarc`
/// (whose copies a kernel holds up), waits for the copies: the planes hold the frame, not
/// zeroes, in every mode of the planes.
#[test]
fn a_cudarc_write_after_upload_cudarc_waits_for_its_copies() {
    let Some(g) = gpu() else { return };
    let (_cu, s, u) = cudarc_streams();
    let layout = VideoLayout::packed((256, 128), VideoFormat::P010).unwrap();
    for mode in MODES {
        let planes = Planes::new(layout);
        let mut registered: VideoPlanes = planes.register(&g, mode).unwrap();
        let bytes = noise(layout.bytes(), 1100);
        let mut slice = s.clone_htod(&bytes).unwrap();
        registered.upload_cudarc(&slice, layout, &s).unwrap();
        s.synchronize().unwrap();
        write_after(&g, &mut slice, (&s, &u), mode == Mode::Interop, |src| {
            registered.upload_cudarc(src, layout, &s).unwrap();
        });
        planes.assert_hold(&bytes, &format!("{mode}: written after"));
        drop(registered);
    }
    g.check_no_errors();
}
