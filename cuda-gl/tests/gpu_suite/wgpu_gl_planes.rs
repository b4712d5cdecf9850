//! The wgpu video planes (`cuda_gl::wgpu_interop::WgpuVideoPlanes`) on the GL route (feature
//! `wgpu-gl`): a wgpu device on wgpu's GL backend over a headless GL context on the CUDA GPU
//! (`wgpu_gl::gl_setup_with`), on which interop mode copies each plane into a GL texture that
//! CUDA registered (one map of both, two copies, one unmap) and wgpu copies both into the
//! textures the application samples. Auto chooses the GL route and says so; NV12 and P010
//! frames of pseudo-random bytes at 1920x1080, 1001x333 and 77x1201 (padded pitches, chroma
//! after a gap: the video module's frames) reach both textures byte for byte, a frame of
//! another size making new textures and one of the same size keeping them; an upload with
//! another GL context current, or none, is refused with the error that says so, leaves the
//! textures as they were (a frame of another size too, before any wgpu call), and uploads work
//! again once the context is current (`read_planes` is refused and works likewise, and every
//! check of the textures reads them back with it too); one into a texture the application destroyed is refused
//! and writes neither texture; planes dropped without their GL context current leak their
//! textures rather than have wgpu delete them in another context; auto mode with no GL context
//! current is refused, not staged.
//!
//! Needs `--features wgpu-gl` (which brings `wgpu` and `egl`), a GPU and NVIDIA's EGL (a
//! headless context on the CUDA device); skips with the reason elsewhere (fails under
//! `CUDA_GL_REQUIRE_GPU=1`).
#![cfg(all(feature = "wgpu-gl", feature = "egl"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::wgpu_gl::{
    assert_drop_leaks_without_its_context, assert_refused_without_the_gl_context,
    both_modes_with_and_without_the_context, gl, gl_setup_with,
};
use super::wgpu_interop::Setup;
use super::wgpu_planes::{
    Destroyed, assert_planes, planes_on, planes_reach_their_textures, want_planes,
};
use crate::gpu::noise;
use cuda_gl::display::{Format, Layout, Mode};
use cuda_gl::video::VideoFormat::Nv12;
use cuda_gl::video::{VideoFormat, VideoLayout};
use cuda_gl::wgpu_interop::{WgpuTarget, WgpuVideoPlanes, check_gl_device};
use cuda_gl::{DeviceBuffer, Error};

/// A set-up on wgpu's GL backend whose device holds P010's 16-bit planes.
fn setup() -> Option<Setup> {
    gl_setup_with(wgpu::Features::TEXTURE_FORMAT_16BIT_NORM)
}

/// Uploads a frame of `layout` of noise of `seed` into `planes`, returns its bytes and whether
/// the textures are new.
fn upload(
    s: &Setup,
    planes: &mut WgpuVideoPlanes,
    layout: VideoLayout,
    seed: u64,
) -> (Vec<u8>, bool) {
    let bytes = noise(layout.bytes(), seed);
    let src = DeviceBuffer::from_slice(&s.ctx, &bytes).unwrap();
    let new = planes.upload(&src, layout, &s.stream).unwrap();
    (bytes, new)
}

/// NV12 planes of `size` in `mode` (`None`: auto) that hold a first frame (noise of `seed`):
/// the frames' layout, the planes and the frame's bytes.
fn nv12_planes(
    s: &Setup,
    size: (u32, u32),
    mode: Option<Mode>,
    seed: u64,
) -> (VideoLayout, WgpuVideoPlanes, Vec<u8>) {
    let wgpu = (&s.device, &s.queue);
    let layout = VideoLayout::packed(size, VideoFormat::Nv12).unwrap();
    let mut planes = planes_on(s, wgpu, size, VideoFormat::Nv12, mode);
    let (kept, _) = upload(s, &mut planes, layout, seed);
    (layout, planes, kept)
}

#[test]
fn video_planes_auto_choose_the_gl_route_and_say_so() {
    let Some(s) = setup() else { return };
    check_gl_device(&s.device, &s.ctx).unwrap();
    let wgpu = (&s.device, &s.queue);
    for format in [VideoFormat::Nv12, VideoFormat::P010] {
        let (mut planes, report) =
            WgpuVideoPlanes::new(&s.ctx, &s.device, &s.queue, (1001, 333), format, None).unwrap();
        let line = report.to_string();
        println!("{format:?}: {line}");
        assert_eq!(
            (planes.mode(), report.mode),
            (Mode::Interop, Mode::Interop),
            "{line}"
        );
        assert!(
            line.starts_with("video planes: interop; wgpu GL: "),
            "{line}"
        );
        let layout = VideoLayout::packed((1001, 333), format).unwrap();
        let (bytes, new) = upload(&s, &mut planes, layout, 0x61_0001);
        assert!(!new, "{format:?}: the planes' own size and format");
        let what = format!("auto {format:?}");
        assert_planes(wgpu, &planes, &want_planes(&bytes, &layout), &what);
        // A frame of another size chooses again: the GL route again.
        let other = VideoLayout::packed((77, 1201), format).unwrap();
        let (bytes, new) = upload(&s, &mut planes, other, 0x61_0002);
        assert!(
            new,
            "{format:?}: a frame of another size makes new textures"
        );
        assert_eq!(planes.mode(), Mode::Interop, "{format:?} after a new size");
        let what = format!("auto {format:?}, another size");
        assert_planes(wgpu, &planes, &want_planes(&bytes, &other), &what);
    }
    s.ctx.check_drop_errors().unwrap();
}

/// NV12 and P010 frames at 1920x1080, 1001x333 and 77x1201 (padded pitches, chroma after a
/// gap) reach both textures byte for byte by the GL route, as `wgpu_planes` checks on Vulkan.
#[test]
fn gl_route_planes_reach_their_textures_byte_for_byte() {
    let Some(s) = setup() else { return };
    planes_reach_their_textures(&s, &[Mode::Interop]);
}

/// An upload with another GL context current (of the same share group), or none, is refused
/// by the map before any GL or wgpu call, and the textures keep the last frame (`read_planes`
/// is refused likewise); once the planes' context is current again, uploads work.
#[test]
fn a_gl_route_upload_without_its_gl_context_is_refused_and_works_once_it_is_current() {
    let Some(s) = setup() else { return };
    let wgpu = (&s.device, &s.queue);
    let (layout, mut planes, kept) = nv12_planes(&s, (320, 181), Some(Mode::Interop), 0x64_0001);
    let bytes = noise(layout.bytes(), 0x64_0002);
    let src = DeviceBuffer::from_slice(&s.ctx, &bytes).unwrap();
    assert_refused_without_the_gl_context(gl(&s), "an upload", || {
        planes.upload(&src, layout, &s.stream)
    });
    assert_refused_without_the_gl_context(gl(&s), "read_planes", || planes.read_planes());
    let want = want_planes(&kept, &layout);
    assert_planes(wgpu, &planes, &want, "after the refused uploads");
    assert!(!planes.upload(&src, layout, &s.stream).unwrap());
    let want = want_planes(&bytes, &layout);
    assert_planes(wgpu, &planes, &want, "once the context is current again");
    drop(planes);
    s.ctx.check_drop_errors().unwrap();
}

/// Staged planes on the GL route's device (over the program's context) refuse `read_planes`
/// without that context current too, before wgpu's copies, and read once it is current again.
#[test]
fn staged_planes_on_the_programs_gl_context_refuse_read_planes_without_it() {
    let Some(s) = setup() else { return };
    let wgpu = (&s.device, &s.queue);
    let (layout, planes, kept) = nv12_planes(&s, (320, 181), Some(Mode::Staged), 0x64_0003);
    assert_eq!(planes.mode(), Mode::Staged);
    assert_refused_without_the_gl_context(gl(&s), "read_planes (staged)", || planes.read_planes());
    let want = want_planes(&kept, &layout);
    assert_planes(
        wgpu,
        &planes,
        &want,
        "staged, once the context is current again",
    );
    drop(planes);
    s.ctx.check_drop_errors().unwrap();
}

/// A frame of another size with another GL context current (of the same share group), or
/// none, is refused before the re-creation's wgpu calls, also by planes made with `None` (which
/// must not fall back to staged mode then): the planes keep their size, mode, textures and last
/// frame; with the context current again, that frame makes new textures in interop mode.
#[test]
fn a_gl_route_frame_of_another_size_without_its_gl_context_is_refused_before_wgpu() {
    let Some(s) = setup() else { return };
    let wgpu = (&s.device, &s.queue);
    let (layout, mut planes, kept) = nv12_planes(&s, (320, 181), None, 0x66_0001);
    assert_eq!(
        planes.mode(),
        Mode::Interop,
        "auto, the first frame uploaded"
    );
    let luma = planes.luma().clone();
    let other = VideoLayout::packed((200, 99), VideoFormat::Nv12).unwrap();
    let bytes = noise(other.bytes(), 0x66_0002);
    let src = DeviceBuffer::from_slice(&s.ctx, &bytes).unwrap();
    assert_refused_without_the_gl_context(gl(&s), "another size", || {
        planes.upload(&src, other, &s.stream)
    });
    let kept_state = (planes.size(), planes.mode(), planes.luma() == &luma);
    assert_eq!(kept_state, ((320, 181), Mode::Interop, true));
    assert_planes(
        wgpu,
        &planes,
        &want_planes(&kept, &layout),
        "after the refusals",
    );
    assert!(
        planes.upload(&src, other, &s.stream).unwrap(),
        "new textures"
    );
    assert_eq!(planes.mode(), Mode::Interop, "200x99");
    assert_planes(wgpu, &planes, &want_planes(&bytes, &other), "200x99");
    drop(planes);
    s.ctx.check_drop_errors().unwrap();
}

/// Auto mode with no GL context current is refused with the error that says so, for planes
/// and for a target: it does not fall back to staged mode, whose wgpu calls would run without
/// the context; and staged mode asked for is refused there too, before wgpu makes anything.
#[test]
fn auto_mode_without_a_gl_context_is_refused_not_staged() {
    let Some(s) = setup() else { return };
    let gl = gl(&s);
    let layout = Layout::packed((64, 36), Format::Rgba8).unwrap();
    for mode in [None, Some(Mode::Staged)] {
        gl.release_current().unwrap();
        let planes = WgpuVideoPlanes::new(&s.ctx, &s.device, &s.queue, (64, 36), Nv12, mode);
        let target = WgpuTarget::new(&s.ctx, &s.device, &s.queue, layout, mode);
        // Current again before anything made is dropped.
        gl.make_current().unwrap();
        let planes = planes.map(|(p, report)| (p.mode(), report.to_string()));
        let target = target.map(|(t, report)| (t.mode(), report.to_string()));
        for (what, made) in [("planes", planes), ("target", target)] {
            let e = made.unwrap_err();
            println!("{what} ({mode:?}) with no GL context current: {e}");
            assert!(
                matches!(e, Error::NoGlContext { .. }),
                "{what} ({mode:?}): {e}"
            );
        }
    }
    s.ctx.check_drop_errors().unwrap();
}

/// The GL name of a texture of wgpu's GL backend.
pub(crate) fn gl_name(texture: &wgpu::Texture) -> u32 {
    // SAFETY: the guard is only read and dropped here.
    let hal = unsafe { texture.as_hal::<wgpu::hal::api::Gles>() }.expect("a GL texture");
    match hal.inner {
        wgpu::hal::gles::TextureInner::Texture { raw, .. } => raw.0.get(),
        ref other => panic!("wgpu holds the texture as {other:?}"),
    }
}

/// Planes dropped with another GL context current (of the same share group, where a deletion
/// would show) leak their textures rather than have wgpu delete them there; dropped with their
/// own context current, wgpu deletes them. In both modes: the GL route's, and staged on the
/// same device (where wgpu alone makes and deletes GL objects, still in the current context).
#[test]
fn gl_route_planes_dropped_without_their_gl_context_leak_their_textures() {
    let Some(s) = setup() else { return };
    let wgpu = (&s.device, &s.queue);
    let gl = gl(&s);
    gl::load_with(|name| gl.get_proc_address(name));
    let layout = VideoLayout::packed((64, 36), VideoFormat::Nv12).unwrap();
    for (mode, own) in both_modes_with_and_without_the_context() {
        let mut planes = planes_on(&s, wgpu, (64, 36), VideoFormat::Nv12, Some(mode));
        upload(&s, &mut planes, layout, 0x67_0001);
        let names = [gl_name(planes.luma()), gl_name(planes.chroma())];
        assert_drop_leaks_without_its_context(&s, planes, &names, mode, own);
    }
}

/// The application destroys the luma texture: the GL route's upload is refused by wgpu with a
/// typed error, and writes neither texture (the chroma still holds the last frame); a frame of
/// another size then makes new textures, which take it byte for byte.
#[test]
fn a_gl_route_upload_into_a_destroyed_texture_is_refused_and_writes_neither() {
    let Some(s) = setup() else { return };
    let wgpu = (&s.device, &s.queue);
    let (layout, mut planes, kept) = nv12_planes(&s, (64, 36), Some(Mode::Interop), 0x65_0001);
    let (luma, chroma) = (planes.luma().clone(), planes.chroma().clone());
    let destroyed = Destroyed {
        luma: &luma,
        chroma: &chroma,
        kept_chroma: &want_planes(&kept, &layout)[1],
    };
    destroyed.refuses_an_upload(&s, &mut planes, layout, 0x65_0002, Mode::Interop);
    let other = VideoLayout::packed((63, 35), VideoFormat::Nv12).unwrap();
    let (more, new) = upload(&s, &mut planes, other, 0x65_0003);
    assert!(
        new && planes.luma() != &luma,
        "the destroyed texture is replaced"
    );
    assert_eq!(planes.mode(), Mode::Interop);
    assert_planes(wgpu, &planes, &want_planes(&more, &other), "63x35");
    drop(planes);
    s.ctx.check_drop_errors().unwrap();
}
