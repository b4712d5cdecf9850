//! The planes of decoded video in wgpu textures (`cuda_gl::wgpu_interop::WgpuVideoPlanes`): NV12
//! and P010 frames of pseudo-random bytes (odd sizes, padded pitches, chroma after a gap: the
//! video module's frames) reach the luma (R8Unorm / R16Unorm) and chroma (Rg8Unorm /
//! Rg16Unorm) textures byte for byte, in interop and in staged mode; a frame of another size or
//! format makes new textures and one of the same size keeps them; refused uploads leave the
//! textures as they were; a device without `TEXTURE_FORMAT_16BIT_NORM` refuses P010 by name and
//! runs NV12 staged; `read_planes` gives both planes byte for byte (every check of the
//! textures reads them back both ways); and a compute shader that samples the textures as the docs say gets each
//! pixel's samples.
//!
//! Needs `--features wgpu,egl`, a GPU and NVIDIA's Vulkan driver (headless:
//! `VK_DRIVER_FILES=.../nvidia_icd.json`); skips with the reason elsewhere.
#![cfg(all(feature = "wgpu", feature = "egl"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "wgpu_planes_shader.rs"]
mod shader;

use super::video::frames;
use super::wgpu_interop::{Setup, setup};
use crate::gpu::noise;
use crate::harness::{packed_rows, ready};
use crate::wgpu_read::read_texture;
use cuda_gl::display::{DisplayError, Mode};
use cuda_gl::video::{VideoError, VideoFormat, VideoFrame, VideoLayout};
use cuda_gl::wgpu_interop::{WgpuError, WgpuVideoPlanes, find_adapter};
use cuda_gl::{DeviceBuffer, Error, UsageError};

/// The texture formats of `format`'s planes: (luma, chroma).
fn formats_of(format: VideoFormat) -> (wgpu::TextureFormat, wgpu::TextureFormat) {
    match format {
        VideoFormat::Nv12 => (wgpu::TextureFormat::R8Unorm, wgpu::TextureFormat::Rg8Unorm),
        _ => (
            wgpu::TextureFormat::R16Unorm,
            wgpu::TextureFormat::Rg16Unorm,
        ),
    }
}

/// Planes of `size` and `format` on `device` in `mode` (`None`: auto).
pub(crate) fn planes_on(
    s: &Setup,
    (device, queue): (&wgpu::Device, &wgpu::Queue),
    size: (u32, u32),
    format: VideoFormat,
    mode: Option<Mode>,
) -> WgpuVideoPlanes {
    let (planes, report) = WgpuVideoPlanes::new(&s.ctx, device, queue, size, format, mode).unwrap();
    println!("{report}");
    if let Some(mode) = mode {
        assert_eq!((planes.mode(), report.mode), (mode, mode), "{report}");
    }
    planes
}

/// What each texture must hold for the frame of `layout` in `bytes`: each plane's rows,
/// tightly packed.
pub(crate) fn want_planes(bytes: &[u8], layout: &VideoLayout) -> [Vec<u8>; 2] {
    let (h, ch) = (layout.height(), layout.chroma_size().1);
    [
        packed_rows(bytes, 0, layout.luma_pitch(), layout.luma_row_bytes(), h),
        packed_rows(
            bytes,
            layout.chroma_offset(),
            layout.chroma_pitch(),
            layout.chroma_row_bytes(),
            ch,
        ),
    ]
}

/// Asserts that the textures of `planes` hold `want`, byte for byte, read back by the test's
/// own copy and by `read_planes`; `what` names the frame.
pub(crate) fn assert_planes(
    device: (&wgpu::Device, &wgpu::Queue),
    planes: &WgpuVideoPlanes,
    want: &[Vec<u8>; 2],
    what: &str,
) {
    assert_textures(device, [planes.luma(), planes.chroma()], want, what);
    let got = planes.read_planes().unwrap();
    for ((name, got), want) in ["luma", "chroma"].into_iter().zip(&got).zip(want) {
        assert_bytes(got, want, &format!("{what}: read_planes' {name} plane"));
    }
}

/// Asserts that the luma and chroma `textures` (clones of the planes', say) hold `want`, byte
/// for byte; `what` names the frame.
pub(crate) fn assert_textures(
    (device, queue): (&wgpu::Device, &wgpu::Queue),
    textures: [&wgpu::Texture; 2],
    want: &[Vec<u8>; 2],
    what: &str,
) {
    let got = textures.map(|t| read_texture(device, queue, t));
    for ((name, got), want) in ["luma", "chroma"].into_iter().zip(got).zip(want) {
        assert_bytes(&got, want, &format!("{what}: the {name} texture"));
    }
}

/// Asserts that `got` is `want`, byte for byte; `what` names them.
pub(crate) fn assert_bytes(got: &[u8], want: &[u8], what: &str) {
    let first = got.iter().zip(want).position(|(a, b)| a != b);
    assert!(
        got.len() == want.len() && first.is_none(),
        "{what} differs from the plane ({} bytes, {} expected; first difference at byte \
         {first:?})",
        got.len(),
        want.len()
    );
}

/// Planes' textures, kept by the application, which destroys the luma one; the chroma texture
/// holds `kept_chroma`, the last frame's chroma plane.
pub(crate) struct Destroyed<'a> {
    pub(crate) luma: &'a wgpu::Texture,
    pub(crate) chroma: &'a wgpu::Texture,
    pub(crate) kept_chroma: &'a [u8],
}

impl Destroyed<'_> {
    /// Destroys the luma texture of `planes` (in `mode`): their upload of the next frame of
    /// `layout` (noise of `seed`) is refused by wgpu with a typed error, which is returned (and
    /// so is `read_planes`); in
    /// interop mode it writes neither texture (the rustdoc's promise), so the chroma texture
    /// still holds the last frame, whose bytes differ from the refused frame's.
    pub(crate) fn refuses_an_upload(
        &self,
        s: &Setup,
        planes: &mut WgpuVideoPlanes,
        layout: VideoLayout,
        seed: u64,
        mode: Mode,
    ) -> Error {
        self.luma.destroy();
        let next = noise(layout.bytes(), seed);
        let next_src = DeviceBuffer::from_slice(&s.ctx, &next).unwrap();
        let e = planes.upload(&next_src, layout, &s.stream).unwrap_err();
        println!("{mode}: an upload into a destroyed texture: {e}");
        assert!(matches!(e, Error::Wgpu(WgpuError::Refused { .. })), "{e}");
        let read = planes.read_planes().unwrap_err();
        println!("{mode}: read_planes of a destroyed texture: {read}");
        assert!(
            matches!(read, Error::Wgpu(WgpuError::Refused { .. })),
            "{read}"
        );
        if mode == Mode::Interop {
            let got = read_texture(&s.device, &s.queue, self.chroma);
            let what = format!("{mode}: after the refused upload, the chroma texture");
            assert_bytes(&got, self.kept_chroma, &what);
        }
        e
    }
}

#[test]
fn video_planes_reach_their_wgpu_textures_byte_for_byte_in_both_modes() {
    let Some(s) = setup() else { return };
    planes_reach_their_textures(&s, &[Mode::Interop, Mode::Staged]);
}

/// In each of `modes`, NV12 and P010 planes made at 16x16 take each of the video module's
/// frames (1920x1080, 1001x333, 77x1201, padded pitches): a frame of another size makes new
/// textures of the planes' formats and sizes, in the same mode, which hold both planes byte for
/// byte; the next frame of that size goes into the same textures, byte for byte too.
pub(crate) fn planes_reach_their_textures(s: &Setup, modes: &[Mode]) {
    let wgpu = (&s.device, &s.queue);
    for &mode in modes {
        for format in [VideoFormat::Nv12, VideoFormat::P010] {
            let mut planes = planes_on(s, wgpu, (16, 16), format, Some(mode));
            let (luma_format, chroma_format) = formats_of(format);
            for (n, (layout, _)) in frames(format).into_iter().enumerate() {
                let what = format!("{mode} {format:?} {:?}", layout.size());
                let bytes = noise(layout.bytes(), 110 + n as u64);
                let src = DeviceBuffer::from_slice(&s.ctx, &bytes).unwrap();
                let new = planes.upload(&src, layout, &s.stream).unwrap();
                assert!(new, "{what}: a frame of another size makes new textures");
                assert_eq!(planes.mode(), mode, "{what}: the planes' mode");
                assert_eq!((planes.size(), planes.format()), (layout.size(), format));
                let (luma, chroma) = (planes.luma().clone(), planes.chroma().clone());
                assert_eq!(
                    (luma.format(), chroma.format()),
                    (luma_format, chroma_format),
                    "{what}"
                );
                let (cw, ch) = layout.chroma_size();
                assert_eq!((luma.width(), luma.height()), layout.size(), "{what}");
                assert_eq!((chroma.width(), chroma.height()), (cw, ch), "{what}");
                assert_planes(wgpu, &planes, &want_planes(&bytes, &layout), &what);
                // The next frame of this size goes into the same textures.
                let next = noise(layout.bytes(), 210 + n as u64);
                let src = DeviceBuffer::from_slice(&s.ctx, &next).unwrap();
                assert!(!planes.upload(&src, layout, &s.stream).unwrap(), "{what}");
                assert!(
                    planes.luma() == &luma && planes.chroma() == &chroma,
                    "{what}"
                );
                let what = format!("{what}, the next frame");
                assert_planes(wgpu, &planes, &want_planes(&next, &layout), &what);
                println!("{what}: both planes byte for byte");
            }
        }
    }
    s.ctx.check_drop_errors().unwrap();
}

/// A frame that starts 6 bytes into a larger allocation (a decoder's surface), through the
/// unsafe call, in both modes.
#[test]
fn a_frame_of_any_origin_uploads_through_the_unsafe_call() {
    let Some(s) = setup() else { return };
    let wgpu = (&s.device, &s.queue);
    let layout = VideoLayout::with_chroma((33, 17), VideoFormat::P010, 80, 80 * 18, 72).unwrap();
    let bytes = noise(6 + layout.bytes() + 10, 0x5eed_0016);
    let src = DeviceBuffer::from_slice(&s.ctx, &bytes).unwrap();
    let frame = VideoFrame::new(src.device_ptr().byte_add(6).unwrap(), layout);
    for mode in [Mode::Interop, Mode::Staged] {
        let mut planes = planes_on(&s, wgpu, (33, 17), VideoFormat::P010, Some(mode));
        // SAFETY: the frame lies in `src` from byte 6 (sized for it above); `src` outlives the
        // upload's copies (the read-back below waits for them on wgpu's queue, after CUDA's
        // signal, or the staged upload waited for them), and nothing writes it.
        let new = unsafe { planes.upload_raw(&frame, &s.stream) }.unwrap();
        assert!(!new, "{mode}: the planes' own size and format");
        let what = format!("{mode}: P010 at byte 6");
        assert_planes(wgpu, &planes, &want_planes(&bytes[6..], &layout), &what);
    }
    s.ctx.check_drop_errors().unwrap();
}

/// A buffer too short, a frame over the device's limit, a frame of the other format that the
/// device cannot hold (see below), a texture the application destroyed: each refused with its
/// error, the textures as they were; a frame of another size then makes new ones.
#[test]
fn a_refused_upload_leaves_the_textures_as_they_were_in_both_modes() {
    let Some(s) = setup() else { return };
    let wgpu = (&s.device, &s.queue);
    for mode in [Mode::Interop, Mode::Staged] {
        let layout = VideoLayout::packed((64, 36), VideoFormat::Nv12).unwrap();
        let bytes = noise(layout.bytes(), 0x5eed_0064);
        let src = DeviceBuffer::from_slice(&s.ctx, &bytes).unwrap();
        let mut planes = planes_on(&s, wgpu, (64, 36), VideoFormat::Nv12, Some(mode));
        planes.upload(&src, layout, &s.stream).unwrap();
        let want = want_planes(&bytes, &layout);
        let (luma, chroma) = (planes.luma().clone(), planes.chroma().clone());
        let kept = |planes: &WgpuVideoPlanes, after: &str| {
            assert!(
                planes.luma() == &luma && planes.chroma() == &chroma,
                "{mode}: new textures after {after}"
            );
            assert_planes(wgpu, planes, &want, &format!("{mode}, after {after}"));
        };

        let short = DeviceBuffer::from_slice(&s.ctx, &bytes[1..]).unwrap();
        let e = planes.upload(&short, layout, &s.stream).unwrap_err();
        let frame_too_small = VideoError::FrameTooSmall {
            call: "WgpuVideoPlanes::upload",
            what: "the device buffer",
            needed: layout.bytes(),
            given: layout.bytes() - 1,
        };
        assert!(
            matches!(&e, Error::Video(v) if *v == frame_too_small),
            "{e}"
        );
        kept(&planes, "a short buffer");

        let max = s.device.limits().max_texture_dimension_2d;
        let huge = VideoLayout::packed((max + 1, 2), VideoFormat::Nv12).unwrap();
        let wide = DeviceBuffer::<u8>::zeroed(&s.ctx, huge.bytes()).unwrap();
        let e = planes.upload(&wide, huge, &s.stream).unwrap_err();
        assert!(
            matches!(e, Error::Usage(UsageError::TooLarge { .. })),
            "{e}"
        );
        assert!(
            e.to_string().starts_with("WgpuVideoPlanes::upload: "),
            "{e}"
        );
        kept(&planes, "a frame over the device's limit");

        // The application destroys the luma texture: refused by wgpu, with a typed error,
        // until a frame of another size makes new textures. In interop mode the chroma
        // texture still holds the previous frame (the rustdoc's promise: a refused upload
        // writes neither texture there); the refused frame's bytes differ from it.
        let destroyed = Destroyed {
            luma: &luma,
            chroma: &chroma,
            kept_chroma: &want[1],
        };
        let e = destroyed.refuses_an_upload(&s, &mut planes, layout, 0x5eed_0065, mode);
        assert!(e.to_string().contains("WgpuVideoPlanes"), "{e}");
        let other = VideoLayout::packed((63, 35), VideoFormat::Nv12).unwrap();
        let more = noise(other.bytes(), 0x5eed_0063);
        let src = DeviceBuffer::from_slice(&s.ctx, &more).unwrap();
        assert!(planes.upload(&src, other, &s.stream).unwrap());
        assert!(
            planes.luma() != &luma,
            "{mode}: the destroyed texture is replaced"
        );
        assert_planes(
            wgpu,
            &planes,
            &want_planes(&more, &other),
            &format!("{mode}, 63x35"),
        );
    }
    s.ctx.check_drop_errors().unwrap();
}

/// `open_device` asks for `TEXTURE_FORMAT_16BIT_NORM` where the adapter offers it. A device
/// opened the usual way (`Adapter::request_device`, no feature, no external-memory extensions)
/// refuses P010 planes by name, with what to enable; its NV12 planes run staged (auto, interop
/// refused and named), byte for byte, and a P010 frame sent to them later is refused with the
/// textures kept. Bad modes and sizes are refused too.
#[test]
fn p010_planes_need_16_bit_textures_and_auto_runs_staged_where_interop_cannot() {
    let Some(s) = setup() else { return };
    let sixteen = wgpu::Features::TEXTURE_FORMAT_16BIT_NORM;
    let adapter = find_adapter(&s.instance, &s.ctx).expect("the adapter the set-up chose");
    assert_eq!(
        s.device.features().contains(sixteen),
        adapter.features().contains(sixteen),
        "open_device asks for 16-bit textures where the adapter offers them"
    );
    let (device, queue) = ready(adapter.request_device(&Default::default())).unwrap();
    assert!(!device.features().contains(sixteen));
    let e = WgpuVideoPlanes::new(&s.ctx, &device, &queue, (64, 36), VideoFormat::P010, None)
        .unwrap_err();
    println!("P010 without the feature: {e}");
    assert!(
        matches!(&e, Error::Wgpu(WgpuError::MissingFeature { feature, .. }) if feature == "TEXTURE_FORMAT_16BIT_NORM"),
        "{e}"
    );
    assert!(e.to_string().contains("help: "), "{e}");

    let wgpu = (&device, &queue);
    let mut planes = planes_on(&s, wgpu, (64, 36), VideoFormat::Nv12, None);
    assert_eq!(planes.mode(), Mode::Staged);
    let layout = VideoLayout::new((64, 36), VideoFormat::Nv12, 80).unwrap();
    let bytes = noise(layout.bytes(), 0x5eed_0036);
    let src = DeviceBuffer::from_slice(&s.ctx, &bytes).unwrap();
    assert!(!planes.upload(&src, layout, &s.stream).unwrap());
    let want = want_planes(&bytes, &layout);
    assert_planes(wgpu, &planes, &want, "NV12 staged on a plain device");
    let p010 = VideoLayout::packed((64, 36), VideoFormat::P010).unwrap();
    let wide = DeviceBuffer::<u8>::zeroed(&s.ctx, p010.bytes()).unwrap();
    let e = planes.upload(&wide, p010, &s.stream).unwrap_err();
    assert!(
        matches!(e, Error::Wgpu(WgpuError::MissingFeature { .. })),
        "{e}"
    );
    assert_eq!(planes.format(), VideoFormat::Nv12);
    assert_planes(wgpu, &planes, &want, "NV12, after a refused P010 frame");

    let new =
        |size, mode| WgpuVideoPlanes::new(&s.ctx, &device, &queue, size, VideoFormat::Nv12, mode);
    let e = new((64, 36), Some(Mode::Stream)).unwrap_err();
    assert!(
        matches!(e, Error::Display(DisplayError::ModeUnavailable { .. })),
        "{e}"
    );
    let e = new((0, 36), None).unwrap_err();
    assert!(
        matches!(e, Error::Video(VideoError::ZeroSize { width: 0, .. })),
        "{e}"
    );
    let max = device.limits().max_texture_dimension_2d;
    let e = new((3, max + 1), None).unwrap_err();
    assert!(
        matches!(e, Error::Usage(UsageError::TooLarge { .. })),
        "{e}"
    );
    assert!(e.to_string().starts_with("WgpuVideoPlanes::new: "), "{e}");
    drop(planes);
    s.ctx.check_drop_errors().unwrap();
}

#[test]
fn a_shader_sampling_the_planes_as_documented_gets_each_pixels_samples() {
    let Some(s) = setup() else { return };
    for format in [VideoFormat::Nv12, VideoFormat::P010] {
        let (layout, _) = frames(format).swap_remove(1);
        let bytes = noise(layout.bytes(), 0x5eed_0333);
        let src = DeviceBuffer::from_slice(&s.ctx, &bytes).unwrap();
        let mut planes = planes_on(&s, (&s.device, &s.queue), layout.size(), format, None);
        planes.upload(&src, layout, &s.stream).unwrap();
        let got = shader::samples(&s.device, &s.queue, &planes);
        let want = shader::samples_cpu(&bytes, &layout);
        let bad = got.iter().zip(&want).filter(|(a, b)| a != b).count();
        let first = got.iter().zip(&want).position(|(a, b)| a != b);
        assert_eq!(
            (got.len(), bad),
            (want.len(), 0),
            "{format:?} {:?}: samples differ from the frame's, first at {first:?} (pixel \
             {:?})",
            layout.size(),
            first.map(|i| (
                i / 3 % layout.width() as usize,
                i / 3 / layout.width() as usize
            ))
        );
        println!(
            "{format:?} {:?}: every pixel's three samples",
            layout.size()
        );
    }
    s.ctx.check_drop_errors().unwrap();
}
