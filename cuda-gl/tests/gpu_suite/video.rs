//! The video conversion on the GPU (`cuda_gl::video::Converter`): NV12 and P010 frames of
//! pseudo-random samples (P010's ignored low bits random too), in every colour space, at sizes
//! odd and even with padded pitches and chroma planes of their own, converted on the GPU and
//! compared, every pixel, with `video::convert_cpu` (within 1 per channel), the destination's
//! padding left alone; the same frames shown on a display target in every mode
//! (`DisplayTarget::show_video`); and the refusals of bad buffers and destinations. Needs
//! `--features egl` (the suite's GPU set-up) and a GPU.
#![cfg(feature = "egl")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::gpu::*;
use cuda_gl::display::{DeviceImage, DisplayError, Format, Layout, Mode};
use cuda_gl::video::{
    ColorMatrix, ColorRange, ColorSpace, Converter, VideoError, VideoFormat, VideoFrame,
    VideoLayout, convert_cpu,
};
use cuda_gl::{DeviceBuffer, Error};

/// What the destination is filled with before a conversion: bytes the kernel must not write
/// keep it.
const SENTINEL: u8 = 0xab;

/// Every matrix in both ranges.
fn spaces() -> Vec<ColorSpace> {
    let matrices = [ColorMatrix::Bt601, ColorMatrix::Bt709, ColorMatrix::Bt2020];
    let ranges = [ColorRange::Limited, ColorRange::Full];
    matrices
        .into_iter()
        .flat_map(|m| ranges.map(|r| ColorSpace::new(m, r)))
        .collect()
}

/// The frames converted, each with the pitch of its RGBA8 destination: 1920x1080 as NVDEC
/// lays it out (pitch a multiple of 512, chroma at the aligned height of 1088 rows); 1001x333
/// (odd sides) with a chroma plane at a pitch of its own after a gap, into a destination whose
/// pitch is no multiple of 4 (the kernel's byte-by-byte writes); 77x1201 (taller than wide)
/// with the chroma right after the luma, into a packed destination.
pub(crate) fn frames(format: VideoFormat) -> Vec<(VideoLayout, usize)> {
    let bps = format.bytes_per_sample();
    let hd = (1920 * bps).next_multiple_of(512);
    let odd_luma = 1001 * bps + 24;
    vec![
        (
            VideoLayout::with_chroma((1920, 1080), format, hd, hd * 1088, hd).unwrap(),
            1920 * 4 + 256,
        ),
        (
            VideoLayout::with_chroma(
                (1001, 333),
                format,
                odd_luma,
                odd_luma * 333 + 64,
                1002 * bps + 46,
            )
            .unwrap(),
            1001 * 4 + 3,
        ),
        (
            VideoLayout::new((77, 1201), format, 96 * bps).unwrap(),
            77 * 4,
        ),
    ]
}

/// Checks `got` (the destination buffer's bytes, an image of `dst` from its start) against
/// `want` (`convert_cpu`'s packed rows): every pixel within 1 per channel, every byte outside
/// the rows still [`SENTINEL`]. Returns how many channels differ by 1.
pub(crate) fn check_rgba(got: &[u8], dst: Layout, want: &[u8], what: &str) -> usize {
    let (w, h) = (dst.width() as usize, dst.height() as usize);
    assert_eq!(want.len(), w * h * 4, "{what}: the reference's size");
    let (mut wrong, mut off_by_one, mut padding) = (Vec::new(), 0, 0);
    for (i, &byte) in got.iter().enumerate() {
        let (y, col) = (i / dst.pitch(), i % dst.pitch());
        if y >= h || col >= w * 4 {
            padding += usize::from(byte != SENTINEL);
            continue;
        }
        let reference = want[(y * w) * 4 + col];
        match byte.abs_diff(reference) {
            0 => {}
            1 => off_by_one += 1,
            _ => wrong.push((col / 4, y, col % 4, byte, reference)),
        }
    }
    assert!(
        wrong.is_empty(),
        "{what}: {} channels off by more than 1, first (x, y, channel, got, want): {:?}",
        wrong.len(),
        &wrong[..wrong.len().min(6)]
    );
    assert_eq!(
        padding, 0,
        "{what}: bytes outside the image's rows were written"
    );
    off_by_one
}

/// Checks `got` (a target's RGBA8 pixels, read back) against `bytes` (a frame of `layout`)
/// converted under `color` by the CPU ([`check_rgba`]: every channel within 1), and says how
/// many channels were off by 1 (`what` names the frame).
#[cfg(any(feature = "cudarc", feature = "wgpu"))]
pub(crate) fn check_video_shown(
    got: &[u8],
    (bytes, layout): (&[u8], VideoLayout),
    color: ColorSpace,
    what: &str,
) {
    let want = convert_cpu(bytes, &layout, color).unwrap();
    let packed = Layout::packed(layout.size(), Format::Rgba8).unwrap();
    let off = check_rgba(got, packed, &want, what);
    println!("{what}: shown within 1 of the CPU's; {off} channels off by 1");
}

/// Every frame of `format` in every colour space, through `convert_buffer`, against the CPU.
fn frames_match_the_cpu(format: VideoFormat, seed: u64) {
    let Some(g) = gpu() else { return };
    let converter = Converter::load(&g.ctx).unwrap();
    assert_eq!(converter.context().raw(), g.ctx.raw());
    for (n, (layout, pitch)) in frames(format).into_iter().enumerate() {
        let bytes = noise(layout.bytes() + 5, seed + n as u64);
        let src = DeviceBuffer::from_slice(&g.ctx, &bytes).unwrap();
        let dst_layout = Layout::new(layout.size(), pitch, Format::Rgba8).unwrap();
        let mut dst = DeviceBuffer::<u8>::zeroed(&g.ctx, dst_layout.bytes() + 16).unwrap();
        for color in spaces() {
            let what = format!("{format:?} {:?} {color:?}", layout.size());
            dst.memset_async(SENTINEL, &g.stream).unwrap();
            converter
                .convert_buffer(&src, layout, color, &mut dst, dst_layout, &g.stream)
                .unwrap();
            let got = dst.to_vec_on(&g.stream).unwrap();
            let want = convert_cpu(&bytes, &layout, color).unwrap();
            let off = check_rgba(&got, dst_layout, &want, &what);
            eprintln!("{what}: every pixel within 1 of the CPU's; {off} channels off by 1");
        }
    }
    drop(converter);
    g.check_no_errors();
}

#[test]
fn nv12_frames_match_the_cpu_reference_in_every_colour_space() {
    frames_match_the_cpu(VideoFormat::Nv12, 0x5eed_0012);
}

#[test]
fn p010_frames_match_the_cpu_reference_in_every_colour_space() {
    frames_match_the_cpu(VideoFormat::P010, 0x5eed_0010);
}

/// The unsafe call on a P010 frame that starts 6 bytes into its allocation (an address no
/// multiple of 4) into an image 4 bytes into its own, beside bytes that stay untouched.
#[test]
fn a_frame_inside_larger_allocations_converts_through_the_unsafe_call() {
    let Some(g) = gpu() else { return };
    let converter = Converter::load(&g.ctx).unwrap();
    let layout = VideoLayout::with_chroma((33, 17), VideoFormat::P010, 80, 80 * 18, 72).unwrap();
    let bytes = noise(6 + layout.bytes(), 0x5eed_0006);
    let src = DeviceBuffer::from_slice(&g.ctx, &bytes).unwrap();
    let dst_layout = Layout::new((33, 17), 33 * 4 + 8, Format::Rgba8).unwrap();
    let mut dst = DeviceBuffer::<u8>::zeroed(&g.ctx, 4 + dst_layout.bytes() + 4).unwrap();
    dst.memset_async(SENTINEL, &g.stream).unwrap();
    let frame = VideoFrame::new(src.device_ptr().byte_add(6).unwrap(), layout);
    assert_eq!(
        frame.chroma_ptr().unwrap().as_raw(),
        src.device_ptr().as_raw() + 6 + 80 * 18
    );
    let image = DeviceImage::new(dst.device_ptr().byte_add(4).unwrap(), dst_layout);
    let color = ColorSpace::new(ColorMatrix::Bt2020, ColorRange::Limited);
    // SAFETY: the frame lies in `src` from byte 6 and the image in `dst` from byte 4 (sized
    // for them above); both buffers live past the read below, which waits for the kernel on
    // `g.stream`, and nothing else touches them meanwhile.
    unsafe { converter.convert(&frame, color, &image, &g.stream) }.unwrap();
    let got = dst.to_vec_on(&g.stream).unwrap();
    assert_eq!(&got[..4], [SENTINEL; 4], "the bytes before the image");
    let want = convert_cpu(&bytes[6..], &layout, color).unwrap();
    check_rgba(&got[4..], dst_layout, &want, "P010 at byte 6");
    drop(converter);
    g.check_no_errors();
}

/// A source too small, a destination too small, not RGBA8 or of another size: each refused
/// with its error, and nothing written.
#[test]
fn bad_buffers_and_destinations_are_refused_before_anything_runs() {
    let Some(g) = gpu() else { return };
    let converter = Converter::load(&g.ctx).unwrap();
    let layout = VideoLayout::packed((16, 8), VideoFormat::Nv12).unwrap();
    let rgba = Layout::packed((16, 8), Format::Rgba8).unwrap();
    let src = DeviceBuffer::from_slice(&g.ctx, &noise(layout.bytes(), 7)).unwrap();
    let short = DeviceBuffer::from_slice(&g.ctx, &noise(layout.bytes() - 1, 7)).unwrap();
    let mut dst = DeviceBuffer::<u8>::zeroed(&g.ctx, rgba.bytes()).unwrap();
    dst.memset_async(SENTINEL, &g.stream).unwrap();
    let color = ColorSpace::default();
    let mut convert = |src: &DeviceBuffer<u8>, dst_layout: Layout| {
        converter.convert_buffer(src, layout, color, &mut dst, dst_layout, &g.stream)
    };

    let e = convert(&short, rgba).unwrap_err();
    let want = VideoError::FrameTooSmall {
        call: "Converter::convert_buffer",
        what: "the source buffer",
        needed: layout.bytes(),
        given: layout.bytes() - 1,
    };
    assert!(matches!(&e, Error::Video(v) if *v == want), "{e}");

    let wide = Layout::new((16, 8), 16 * 4 + 4, Format::Rgba8).unwrap();
    let e = convert(&src, wide).unwrap_err();
    assert!(
        matches!(e, Error::Display(DisplayError::PitchedSource { .. })),
        "{e}"
    );

    let grey = Layout::packed((16, 8), Format::R8).unwrap();
    let e = convert(&src, grey).unwrap_err();
    assert!(
        matches!(&e, Error::Video(VideoError::DestinationFormat { format, .. }) if format == "R8"),
        "{e}"
    );

    let smaller = Layout::packed((16, 7), Format::Rgba8).unwrap();
    let e = convert(&src, smaller).unwrap_err();
    let want = VideoError::DestinationSize {
        call: "Converter::convert_buffer",
        frame: (16, 8),
        image: (16, 7),
    };
    assert!(matches!(&e, Error::Video(v) if *v == want), "{e}");

    // The unsafe call checks the destination too.
    let frame = VideoFrame::in_buffer(&src, layout).unwrap();
    let image = DeviceImage::new(dst.device_ptr(), smaller);
    // SAFETY: refused before anything is queued (the sizes differ); both buffers live.
    let e = unsafe { converter.convert(&frame, color, &image, &g.stream) }.unwrap_err();
    assert!(
        matches!(
            e,
            Error::Video(VideoError::DestinationSize {
                call: "Converter::convert",
                ..
            })
        ),
        "{e}"
    );
    let e = VideoFrame::in_buffer(&short, layout).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Video(VideoError::FrameTooSmall {
                call: "VideoFrame::in_buffer",
                ..
            })
        ),
        "{e}"
    );

    assert_eq!(
        dst.to_vec_on(&g.stream).unwrap(),
        vec![SENTINEL; rgba.bytes()],
        "a refused conversion wrote nothing"
    );
    drop(converter);
    g.check_no_errors();
}

/// The frames of both formats at every size, each in two colour spaces, shown on a display
/// target in every mode that runs on NVIDIA's GL: the texture, read back, is `convert_cpu`'s
/// image within 1 per channel; a short buffer is refused with the target unchanged.
#[test]
fn video_frames_shown_on_a_display_target_match_the_cpu_in_every_mode() {
    let Some(g) = gpu() else { return };
    let two = [
        ColorSpace::default(),
        ColorSpace::new(ColorMatrix::Bt2020, ColorRange::Full),
    ];
    for mode in [Mode::Interop, Mode::Staged, Mode::Stream] {
        let (mut target, report) = display_target(&g.ctx, (16, 16), Some(mode));
        assert_eq!(report.mode, mode, "{report}");
        for format in [VideoFormat::Nv12, VideoFormat::P010] {
            for (n, (layout, _)) in frames(format).into_iter().enumerate() {
                let bytes = noise(layout.bytes(), 40 + n as u64);
                let src = DeviceBuffer::from_slice(&g.ctx, &bytes).unwrap();
                for color in two {
                    let what = format!("{mode} {format:?} {:?} {color:?}", layout.size());
                    target.show_video(&src, layout, color, &g.stream).unwrap();
                    assert_eq!(
                        (target.size(), target.format()),
                        (layout.size(), Format::Rgba8)
                    );
                    let got = target.read_pixels().unwrap();
                    let want = convert_cpu(&bytes, &layout, color).unwrap();
                    let packed = Layout::packed(layout.size(), Format::Rgba8).unwrap();
                    let off = check_rgba(&got, packed, &want, &what);
                    eprintln!("{what}: shown within 1 of the CPU's; {off} channels off by 1");
                }
            }
        }
        let before = target.read_pixels().unwrap();
        let layout = VideoLayout::packed((64, 36), VideoFormat::Nv12).unwrap();
        let short = DeviceBuffer::<u8>::zeroed(&g.ctx, layout.bytes() - 1).unwrap();
        let e = target
            .show_video(&short, layout, ColorSpace::default(), &g.stream)
            .unwrap_err();
        assert!(
            matches!(e, Error::Video(VideoError::FrameTooSmall { .. })),
            "{e}"
        );
        assert_eq!(
            target.read_pixels().unwrap(),
            before,
            "{mode}: a refused show drew"
        );
    }
    g.check_no_errors();
}
