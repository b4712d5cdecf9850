//! The modes of `cuda_gl::video::VideoPlanes` on NVIDIA's GL: `None` picks interop with nothing
//! refused, and the textures then make planes in every mode; the staged mode claims both textures until it drops
//! (no registration, nor other planes in either mode, can have them meanwhile); a staged upload
//! after the application deleted a texture is refused before anything is written; an upload with
//! no GL context current is refused in both modes, leaving the textures as they were. (Both
//! modes' uploads, byte for byte, are `video_planes`' tests.) Needs `--features egl` and a GPU.
#![cfg(feature = "egl")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::video_planes::{MODES, Planes, fill, plane_texels, plane_texture};
use crate::gpu::*;
use cuda_gl::display::Mode;
use cuda_gl::video::{VideoError, VideoFormat, VideoLayout, VideoPlanes};
use cuda_gl::{DeviceBuffer, Error, ImageTarget, RegisterFlags, RegisteredImage};

/// The layout of the tests' frames: NV12 at an odd size (chroma 39 x 21), rows padded.
fn odd_nv12() -> VideoLayout {
    VideoLayout::new((77, 41), VideoFormat::Nv12, 96).unwrap()
}

/// Registers texture `name` alone with CUDA, as an application would.
fn register_texture(g: &Gpu, name: u32) -> cuda_gl::Result<RegisteredImage> {
    RegisteredImage::register(&g.ctx, name, ImageTarget::Texture2D, RegisterFlags::NONE)
}

/// Asserts that `e` is `Error::AlreadyRegistered` (of texture `name`, when given).
#[track_caller]
fn assert_already_registered(e: &Error, name: Option<u32>, what: &str) {
    assert!(
        matches!(e, Error::AlreadyRegistered { name: n, .. } if name.is_none_or(|name| *n == name)),
        "{what}: expected AlreadyRegistered, got {e:?}"
    );
}

/// On NVIDIA's GL on the CUDA GPU, `None` picks interop and the report says so, with nothing
/// refused and no fix to give; once they drop, the textures make planes in each mode (stream
/// too, which `None` never picks).
#[test]
fn auto_picks_interop_on_nvidia_gl_and_every_mode_works_after_it() {
    let Some(g) = gpu() else { return };
    for format in [VideoFormat::Nv12, VideoFormat::P010] {
        let layout = VideoLayout::packed((64, 36), format).unwrap();
        let planes = Planes::new(layout);
        let (auto, report) = VideoPlanes::new(&g.ctx, planes.names(), format, None).unwrap();
        eprintln!("{report}");
        assert_eq!(auto.mode(), Mode::Interop, "{format:?}: {report}");
        assert_eq!(report.mode, Mode::Interop, "{format:?}: {report}");
        assert!(report.refused.is_empty(), "{format:?}: {report}");
        assert_eq!(report.fix(), None, "{format:?}: {report}");
        assert_eq!(report.api, "GL", "{format:?}: {report}");
        assert_eq!((auto.size(), auto.format()), ((64, 36), format));
        planes.upload_checked_last(&g, auto, 21, &format!("{format:?}: auto (interop)"));

        for mode in MODES {
            let what = format!("{format:?}: {mode} after auto's planes dropped");
            planes.register_checked_last(&g, mode, 22, &what);
        }
    }
}

/// Staged planes claim both textures: registering either with CUDA is refused as
/// `AlreadyRegistered`, and so are other planes of them in each mode and in auto, and planes of
/// one of them and another texture (whose claim or registration is then released: that texture
/// registers at once). The staged planes still upload; once they drop, each texture registers,
/// and the textures make interop planes. Interop planes, the other way round, keep staged planes
/// off their textures.
#[test]
fn staged_planes_claim_their_textures_until_dropped() {
    let Some(g) = gpu() else { return };
    let layout = odd_nv12();
    let planes = Planes::new(layout);
    let mut staged = planes.register(&g, Mode::Staged).unwrap();
    for (name, plane) in [(planes.luma, "luma"), (planes.chroma, "chroma")] {
        let e = register_texture(&g, name).unwrap_err();
        assert_already_registered(&e, Some(name), &format!("registering the {plane} texture"));
    }
    for mode in MODES {
        let e = planes.register(&g, mode).unwrap_err();
        assert_already_registered(&e, None, &format!("second planes in {mode}"));
    }
    let e = VideoPlanes::new(&g.ctx, planes.names(), VideoFormat::Nv12, None).unwrap_err();
    assert_already_registered(&e, None, "second planes in auto");

    // A fresh luma texture beside the claimed chroma: refused at the chroma, and the fresh
    // texture is not left claimed or registered by the refused planes.
    let other = plane_texture(gl::R8, layout.size(), 1);
    for mode in MODES {
        let textures = [other, planes.chroma];
        let e = VideoPlanes::new(&g.ctx, textures, VideoFormat::Nv12, Some(mode)).unwrap_err();
        assert_already_registered(&e, Some(planes.chroma), &format!("{mode}: a shared chroma"));
        let alone = register_texture(&g, other);
        assert!(
            alone.is_ok(),
            "{mode}: the refused planes kept the other luma: {alone:?}"
        );
    }
    delete_texture(other);

    planes.upload_checked(&g, &mut staged, 31, "staged, after the refusals");
    drop(staged);
    for (name, plane) in [(planes.luma, "luma"), (planes.chroma, "chroma")] {
        let registered = register_texture(&g, name);
        assert!(
            registered.is_ok(),
            "the {plane} texture after the staged planes dropped: {registered:?}"
        );
    }
    // The other way round: interop planes hold registrations, which staged planes respect.
    let interop = planes.register(&g, Mode::Interop).unwrap();
    let e = planes.register(&g, Mode::Staged).unwrap_err();
    assert_already_registered(
        &e,
        Some(planes.luma),
        "staged planes of interop planes' textures",
    );
    planes.upload_checked_last(&g, interop, 32, "interop, after the staged planes dropped");
}

/// A staged or stream upload after the application deleted the luma texture (which it must not
/// do while the planes hold it) is refused as `PlaneStorage`, naming the luma, before anything
/// is copied or written: the chroma texture is as it was, no GL error is left pending, and the
/// planes drop cleanly.
#[test]
fn a_copying_upload_after_the_luma_texture_was_deleted_is_refused_and_writes_nothing() {
    let Some(g) = gpu() else { return };
    for mode in [Mode::Staged, Mode::Stream] {
        deleted_luma_refused(&g, mode);
    }
}

/// [`a_copying_upload_after_the_luma_texture_was_deleted_is_refused_and_writes_nothing`] in
/// `mode`.
fn deleted_luma_refused(g: &Gpu, mode: Mode) {
    let layout = odd_nv12();
    let mut planes = Planes::new(layout);
    let (cw, ch) = layout.chroma_size();
    let before = noise(cw as usize * ch as usize * 2, 41);
    fill(planes.chroma, 0, (cw, ch), 2, &before);
    let mut staged = planes.register(g, mode).unwrap();
    let luma = planes.luma;
    delete_texture(luma);
    // Not deleted again by `Planes`' drop (GL ignores name 0), in case GL gave the name anew.
    planes.luma = 0;
    check_gl();
    let bytes = noise(layout.bytes(), 42);
    let src = DeviceBuffer::from_slice(&g.ctx, &bytes).unwrap();
    let e = staged.upload(&src, layout, &g.stream).unwrap_err();
    assert!(
        matches!(
            &e,
            Error::Video(VideoError::PlaneStorage { call: "VideoPlanes::upload", plane: "luma", texture, .. })
                if *texture == luma
        ),
        "{mode}: {e:?}"
    );
    check_gl();
    let chroma = plane_texels(planes.chroma, 0, (cw, ch), 2, 1);
    assert!(
        chroma == before,
        "{mode}: the refused upload wrote the chroma texture"
    );
    // Refused again, the same way: the first refusal changed nothing either.
    let e = staged.upload(&src, layout, &g.stream).unwrap_err();
    assert!(
        matches!(
            &e,
            Error::Video(VideoError::PlaneStorage { plane: "luma", .. })
        ),
        "{mode}, again: {e:?}"
    );
    drop(staged);
    // The claim of the chroma ended with the planes.
    let registered = register_texture(g, planes.chroma);
    assert!(
        registered.is_ok(),
        "{mode}: the chroma after the planes dropped: {registered:?}"
    );
    drop(registered);
    g.check_no_errors();
}

/// An upload with no GL context current is refused as `NoGlContext` in each mode, leaving both
/// textures as they were; with the context current again, the planes upload the next frame.
#[test]
fn an_upload_with_no_gl_context_current_is_refused() {
    let Some(g) = gpu() else { return };
    let layout = odd_nv12();
    for (m, mode) in MODES.into_iter().enumerate() {
        let planes = Planes::new(layout);
        let (cw, ch) = layout.chroma_size();
        let seed = 50 + 10 * m as u64;
        let before = (
            noise(77 * 41, seed),
            noise(cw as usize * ch as usize * 2, seed + 1),
        );
        fill(planes.luma, 0, layout.size(), 1, &before.0);
        fill(planes.chroma, 0, (cw, ch), 2, &before.1);
        let mut made = planes.register(&g, mode).unwrap();
        let src = DeviceBuffer::from_slice(&g.ctx, &noise(layout.bytes(), seed + 2)).unwrap();
        g.gl.release_current().unwrap();
        let refused = made.upload(&src, layout, &g.stream);
        g.gl.make_current().unwrap();
        let e = refused.unwrap_err();
        assert!(matches!(e, Error::NoGlContext { .. }), "{mode}: {e:?}");
        g.stream.synchronize().unwrap();
        assert!(
            planes.texels() == before,
            "{mode}: the upload refused for no GL context changed the textures"
        );
        let what = format!("{mode}: with the GL context current again");
        planes.upload_checked_last(&g, made, seed + 3, &what);
    }
}

/// An integer the current context reports for `name`.
fn get_integer(name: gl::types::GLenum) -> i32 {
    let mut value = -1;
    // SAFETY: a context is current; a valid query and out-pointer.
    unsafe { gl::GetIntegerv(name, &mut value) };
    value
}

/// An upload in either mode under the application's own bindings (a pixel unpack buffer bound,
/// texture unit 1 active with a texture of its own, another on unit 0) reaches both textures
/// byte for byte, and leaves every binding and the active unit as the application set them
/// (the staged mode binds the planes' textures and unbinds the unpack buffer to write them).
#[test]
fn uploads_keep_the_applications_bindings() {
    let Some(g) = gpu() else { return };
    let layout = odd_nv12();
    let planes = Planes::new(layout);
    let (own0, own1) = (
        plane_texture(gl::R8, (4, 4), 1),
        plane_texture(gl::RG8, (4, 4), 1),
    );
    let unpack = gl_buffer(4096, None);
    for mode in MODES {
        // SAFETY: a context is current; the names are live objects of it.
        unsafe {
            gl::ActiveTexture(gl::TEXTURE0);
            gl::BindTexture(gl::TEXTURE_2D, own0);
            gl::ActiveTexture(gl::TEXTURE1);
            gl::BindTexture(gl::TEXTURE_2D, own1);
            gl::BindBuffer(gl::PIXEL_UNPACK_BUFFER, unpack);
        }
        check_gl();
        let mut registered = planes.register(&g, mode).unwrap();
        let bytes = noise(layout.bytes(), 31);
        let src = DeviceBuffer::from_slice(&g.ctx, &bytes).unwrap();
        registered.upload(&src, layout, &g.stream).unwrap();
        let bound = (
            get_integer(gl::ACTIVE_TEXTURE) as u32,
            get_integer(gl::TEXTURE_BINDING_2D) as u32,
            get_integer(gl::PIXEL_UNPACK_BUFFER_BINDING) as u32,
        );
        assert_eq!(
            bound,
            (gl::TEXTURE1, own1, unpack),
            "{mode}: unit 1's bindings"
        );
        // SAFETY: as above.
        unsafe { gl::ActiveTexture(gl::TEXTURE0) };
        let unit0 = get_integer(gl::TEXTURE_BINDING_2D) as u32;
        assert_eq!(unit0, own0, "{mode}: unit 0's texture");
        // SAFETY: as above; the reads below take no unpack buffer.
        unsafe { gl::BindBuffer(gl::PIXEL_UNPACK_BUFFER, 0) };
        check_gl();
        planes.assert_hold(&bytes, &format!("{mode}: under the application's bindings"));
        drop(registered);
    }
    delete_texture(own0);
    delete_texture(own1);
    delete_buffer(unpack);
    g.check_no_errors();
}
