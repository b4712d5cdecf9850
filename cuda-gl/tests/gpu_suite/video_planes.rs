//! The planes of decoded video in GL textures (`cuda_gl::video::VideoPlanes`): NV12 and P010
//! frames of pseudo-random bytes (odd sizes, padded pitches, chroma after a gap: the video
//! module's frames) reach the luma (R8 / R16) and chroma (RG8 / RG16) textures byte for byte,
//! frame after frame; registration refuses textures that cannot hold the planes (mutable
//! storage, other formats, a chroma texture of another size); and refused uploads leave both
//! textures byte for byte as they were. Each test runs in both modes of the planes: interop
//! (CUDA maps the textures) and staged (pinned memory, then GL's `glTexSubImage2D`); the
//! modes' own behaviour (auto, the staged mode's claims and checks) is in `video_planes_modes`.
//! Needs `--features egl` and a GPU.
#![cfg(feature = "egl")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::video::frames;
use crate::gpu::*;
use crate::harness::packed_rows;
use cuda_gl::display::Mode;
use cuda_gl::video::{VideoError, VideoFormat, VideoFrame, VideoLayout, VideoPlanes};
use cuda_gl::{DeviceBuffer, DevicePtr, Error, TextureName};

/// The modes of the planes, each test's loop: interop, then staged.
pub(super) const MODES: [Mode; 3] = [Mode::Interop, Mode::Staged, Mode::Stream];

/// The GL internal formats of `format`'s planes: (luma, chroma).
fn formats_of(format: VideoFormat) -> (gl::types::GLenum, gl::types::GLenum) {
    match format {
        VideoFormat::Nv12 => (gl::R8, gl::RG8),
        _ => (gl::R16, gl::RG16),
    }
}

/// A 2-D texture of `internal` immutable storage with `levels` levels, `width` x `height`.
pub(super) fn plane_texture(internal: gl::types::GLenum, size: (u32, u32), levels: u32) -> u32 {
    gl_kit::texture::storage_of(gl::TEXTURE_2D, internal, levels, (size.0, size.1, 1))
        .expect("making a plane texture")
}

/// A 2-D texture of mutable storage (`glTexImage2D` level 0, 8-bit samples), as an application
/// that does not use `glTexStorage2D` makes it.
pub(super) fn mutable_texture(internal: gl::types::GLenum, (width, height): (u32, u32)) -> u32 {
    let mut name = 0;
    let channels = if internal == gl::R8 { 1 } else { 2 };
    let (format, kind) = gl_kit::plane::transfer(channels, 1).unwrap();
    // SAFETY: a GL context is current; `name` is a valid out-pointer; no pixels are passed
    // and no unpack buffer is bound.
    unsafe {
        gl::GenTextures(1, &mut name);
        gl::BindTexture(gl::TEXTURE_2D, name);
        gl::BindBuffer(gl::PIXEL_UNPACK_BUFFER, 0);
        gl::TexImage2D(
            gl::TEXTURE_2D,
            0,
            internal as i32,
            width as i32,
            height as i32,
            0,
            format,
            kind,
            std::ptr::null(),
        );
        gl::BindTexture(gl::TEXTURE_2D, 0);
    }
    check_gl();
    name
}

/// The texels of level `level` of `texture` (`width` x `height` of `channels` samples of
/// `bytes` bytes each), rows tightly packed, as GL reads them.
pub(super) fn plane_texels(
    texture: u32,
    level: i32,
    (width, height): (u32, u32),
    channels: usize,
    bytes: usize,
) -> Vec<u8> {
    let out = gl_kit::readback::plane(texture, level, channels, bytes).unwrap();
    let want = width as usize * height as usize * channels * bytes;
    assert_eq!(
        out.len(),
        want,
        "texture {texture} level {level}: bytes read back"
    );
    out
}

/// Writes `texels` (rows tightly packed, as [`plane_texels`] reads them) into level `level` of
/// `texture` with GL.
pub(super) fn fill(
    texture: u32,
    level: i32,
    (width, height): (u32, u32),
    channels: usize,
    texels: &[u8],
) {
    let bytes = texels.len() / (width as usize * height as usize * channels);
    let level_texels = (channels, bytes);
    gl_kit::plane::write(texture, level, (width, height), level_texels, texels).unwrap();
}

/// The plane textures of `layout`'s frames, with their sizes and sample bytes.
pub(super) struct Planes {
    pub(super) luma: u32,
    pub(super) chroma: u32,
    pub(super) layout: VideoLayout,
}

impl Planes {
    pub(super) fn new(layout: VideoLayout) -> Planes {
        let (luma, chroma) = formats_of(layout.format());
        Planes {
            luma: plane_texture(luma, layout.size(), 1),
            chroma: plane_texture(chroma, layout.chroma_size(), 1),
            layout,
        }
    }

    /// Both textures' texels: (luma, chroma).
    pub(super) fn texels(&self) -> (Vec<u8>, Vec<u8>) {
        let bps = self.layout.format().bytes_per_sample();
        (
            plane_texels(self.luma, 0, self.layout.size(), 1, bps),
            plane_texels(self.chroma, 0, self.layout.chroma_size(), 2, bps),
        )
    }

    /// Asserts that the textures hold the planes of the frame `bytes` of their layout.
    pub(super) fn assert_hold(&self, bytes: &[u8], what: &str) {
        let layout = &self.layout;
        let bps = layout.format().bytes_per_sample();
        let (w, h) = layout.size();
        let want_luma = packed_rows(bytes, 0, layout.luma_pitch(), w as usize * bps, h);
        let (cw, ch) = layout.chroma_size();
        let want_chroma = packed_rows(
            bytes,
            layout.chroma_offset(),
            layout.chroma_pitch(),
            cw as usize * 2 * bps,
            ch,
        );
        let (luma, chroma) = self.texels();
        assert!(
            luma == want_luma,
            "{what}: the luma texture differs from the plane"
        );
        assert!(
            chroma == want_chroma,
            "{what}: the chroma texture differs from the plane"
        );
    }

    /// Uploads a frame of pseudo-random bytes (`seed`) of the textures' layout through
    /// `registered`, and asserts that the textures then hold its planes.
    pub(super) fn upload_checked(
        &self,
        g: &Gpu,
        registered: &mut VideoPlanes,
        seed: u64,
        what: &str,
    ) {
        let bytes = noise(self.layout.bytes(), seed);
        let src = DeviceBuffer::from_slice(&g.ctx, &bytes).unwrap();
        registered.upload(&src, self.layout, &g.stream).unwrap();
        self.assert_hold(&bytes, what);
    }

    /// The last step of a test whose refusals left the planes as they were: a good frame
    /// (`seed`) uploaded through `registered` reaches both textures ([`Planes::upload_checked`]),
    /// and once `registered` is unregistered, nothing went wrong ([`Gpu::check_no_errors`]).
    pub(super) fn upload_checked_last(
        &self,
        g: &Gpu,
        mut registered: VideoPlanes,
        seed: u64,
        what: &str,
    ) {
        self.upload_checked(g, &mut registered, seed, what);
        drop(registered);
        g.check_no_errors();
    }

    /// Video planes of the textures in `mode` ([`Planes::register`]) whose upload of frame
    /// `seed`, checked, is their last ([`Planes::upload_checked_last`]).
    pub(super) fn register_checked_last(&self, g: &Gpu, mode: Mode, seed: u64, what: &str) {
        let registered = self.register(g, mode).unwrap();
        self.upload_checked_last(g, registered, seed, what);
    }

    /// Video planes of the textures in `mode` (asked for: the planes must be in it).
    pub(super) fn register(&self, g: &Gpu, mode: Mode) -> cuda_gl::Result<VideoPlanes> {
        let made = VideoPlanes::new(&g.ctx, self.names(), self.layout.format(), Some(mode));
        made.map(|(planes, report)| {
            assert_eq!(planes.mode(), mode, "{report}");
            assert_eq!(report.mode, mode, "{report}");
            assert_eq!(
                planes.size(),
                self.layout.size(),
                "{mode}: the planes' size"
            );
            planes
        })
    }

    /// The textures' names: `[luma, chroma]`.
    pub(super) fn names(&self) -> [TextureName; 2] {
        [TextureName(self.luma), TextureName(self.chroma)]
    }
}

impl Drop for Planes {
    fn drop(&mut self) {
        delete_texture(self.luma);
        delete_texture(self.chroma);
    }
}

/// The planes of NV12 and P010 frames (odd sizes, padded pitches, chroma after a gap) copied
/// into R8 + RG8 and R16 + RG16 textures equal the source's rows byte for byte, and so do
/// those of a second frame uploaded into the same textures; in each mode.
#[test]
fn video_planes_reach_their_gl_textures_byte_for_byte() {
    let Some(g) = gpu() else { return };
    for mode in MODES {
        for format in [VideoFormat::Nv12, VideoFormat::P010] {
            for (n, (layout, _)) in frames(format).into_iter().enumerate() {
                let planes = Planes::new(layout);
                let mut registered = planes.register(&g, mode).unwrap();
                assert_eq!(registered.format(), format, "{mode}");
                for frame in 0..3 {
                    let what = format!("{mode}: {format:?} {:?}, frame {frame}", layout.size());
                    let seed = 90 + 10 * n as u64 + frame;
                    planes.upload_checked(&g, &mut registered, seed, &what);
                }
                // Frames back to back, with no read between them: the stream mode's slots are
                // each written again while GL's copies out of them may still run.
                let burst: Vec<Vec<u8>> = (0..5).map(|k| noise(layout.bytes(), 300 + k)).collect();
                for bytes in &burst {
                    let src = DeviceBuffer::from_slice(&g.ctx, bytes).unwrap();
                    registered.upload(&src, layout, &g.stream).unwrap();
                }
                let what = format!(
                    "{mode}: {format:?} {:?}, the last of 5 back to back",
                    layout.size()
                );
                planes.assert_hold(&burst[4], &what);
                drop(registered);
            }
        }
    }
    g.check_no_errors();
}

/// `upload_raw` of a frame in memory that no `DeviceBuffer` describes (as a decoder's mapped
/// surface: here 4 KiB into a larger allocation, the frame's bytes there) reaches both
/// textures byte for byte, frame after frame; in each mode, NV12 and P010.
#[test]
fn a_frame_of_raw_device_memory_reaches_the_textures() {
    let Some(g) = gpu() else { return };
    const OFFSET: usize = 4096;
    for mode in MODES {
        for format in [VideoFormat::Nv12, VideoFormat::P010] {
            let (layout, _) = frames(format).into_iter().next().unwrap();
            let planes = Planes::new(layout);
            let mut registered = planes.register(&g, mode).unwrap();
            for frame in 0..2 {
                let what = format!("{mode}: {format:?} {:?}, raw frame {frame}", layout.size());
                let bytes = noise(layout.bytes(), 500 + frame);
                let mut surface = vec![0x5a; OFFSET];
                surface.extend_from_slice(&bytes);
                let held = DeviceBuffer::from_slice(&g.ctx, &surface).unwrap();
                let ptr = DevicePtr::from_raw(held.device_ptr().as_raw() + OFFSET as u64);
                let raw = VideoFrame::new(ptr, layout);
                // SAFETY: (1) the frame's bytes lie in `held`, of the planes' context, which
                // lives (and is not written) until the upload's work ran: `assert_hold` reads
                // the textures after it, and `held` drops after that.
                unsafe { registered.upload_raw(&raw, &g.stream) }.unwrap();
                planes.assert_hold(&bytes, &what);
                drop(held);
            }
            drop(registered);
        }
    }
    g.check_no_errors();
}

/// Textures that cannot hold the planes are refused when registered, each with its error:
/// mutable storage, a chroma texture of another size than half the luma's, 8-bit textures for
/// P010 frames, the planes' textures swapped. The textures register again afterwards (nothing
/// of a refused registration is left); in each mode.
#[test]
fn plane_textures_that_cannot_hold_the_planes_are_refused_at_registration() {
    let Some(g) = gpu() else { return };
    let nv12 = VideoLayout::packed((64, 36), VideoFormat::Nv12).unwrap();
    let planes = Planes::new(nv12);
    for mode in MODES {
        let register = |luma, chroma, format| {
            let textures = [TextureName(luma), TextureName(chroma)];
            VideoPlanes::new(&g.ctx, textures, format, Some(mode)).unwrap_err()
        };

        let mutable = mutable_texture(gl::R8, (64, 36));
        let e = register(mutable, planes.chroma, VideoFormat::Nv12);
        assert!(
            matches!(&e, Error::Video(VideoError::PlaneStorage { plane: "luma", texture, .. })
                if *texture == mutable),
            "{mode}: {e}"
        );
        assert!(e.to_string().contains("glTexStorage2D"), "{mode}: {e}");
        delete_texture(mutable);

        let wide = plane_texture(gl::RG8, (64, 36), 1);
        let e = register(planes.luma, wide, VideoFormat::Nv12);
        assert!(
            matches!(
                &e,
                Error::Video(VideoError::PlaneTexture {
                    call: "VideoPlanes::new",
                    plane: "chroma",
                    ..
                })
            ),
            "{mode}: {e}"
        );
        delete_texture(wide);

        let e = register(planes.luma, planes.chroma, VideoFormat::P010);
        assert!(
            matches!(&e, Error::Video(VideoError::PlaneTexture { plane: "luma", want, .. })
                if want.contains("GL_R16")),
            "{mode}: {e}"
        );
        let e = register(planes.chroma, planes.luma, VideoFormat::Nv12);
        assert!(
            matches!(&e, Error::Video(VideoError::PlaneTexture { plane: "luma", got, .. })
                if got.contains("GL_RG8")),
            "{mode}: {e}"
        );

        let what = format!("{mode}: after the refused registrations");
        planes.register_checked_last(&g, mode, 7, &what);
    }
}

/// Uploads refused for the frame (another format, another size, a buffer too small) leave
/// both textures as they were, byte for byte, and the planes upload the next good frame; the
/// size is refused before the mode touches anything (with no GL context current, an interop
/// map, or the staged mode's owner check, would be refused first, as `NoGlContext`); in each
/// mode.
#[test]
fn refused_uploads_leave_both_textures_as_they_were() {
    let Some(g) = gpu() else { return };
    let layout = VideoLayout::packed((64, 36), VideoFormat::Nv12).unwrap();
    for (m, mode) in MODES.into_iter().enumerate() {
        let planes = Planes::new(layout);
        let seed = 11 + 10 * m as u64;
        let before = (noise(64 * 36, seed), noise(32 * 18 * 2, seed + 1));
        fill(planes.luma, 0, (64, 36), 1, &before.0);
        fill(planes.chroma, 0, (32, 18), 2, &before.1);
        let mut registered = planes.register(&g, mode).unwrap();
        let refusals: [(VideoLayout, usize); 3] = [
            (VideoLayout::packed((64, 36), VideoFormat::P010).unwrap(), 0),
            (VideoLayout::packed((64, 38), VideoFormat::Nv12).unwrap(), 0),
            (layout, 1),
        ];
        for (n, (frame, short)) in refusals.into_iter().enumerate() {
            let src = DeviceBuffer::<u8>::zeroed(&g.ctx, frame.bytes() - short).unwrap();
            // The wrong size is refused with no GL context current: refused before the mode
            // runs (its map or owner check first would be refused as `NoGlContext`), so a
            // refused upload maps or writes nothing.
            if n == 1 {
                g.gl.release_current().unwrap();
            }
            let e = registered.upload(&src, frame, &g.stream).unwrap_err();
            if n == 1 {
                g.gl.make_current().unwrap();
            }
            let expected = match n {
                0 => matches!(e, Error::Video(VideoError::PlaneFormat { .. })),
                1 => matches!(
                    &e,
                    Error::Video(VideoError::PlaneTexture { call: "VideoPlanes::upload", plane: "luma", want, .. })
                        if want.starts_with("64 x 38")
                ),
                _ => matches!(e, Error::Video(VideoError::FrameTooSmall { .. })),
            };
            assert!(expected, "{mode}: refusal {n}: {e}");
            assert!(
                planes.texels() == before,
                "{mode}: refusal {n} ({e}) changed the textures"
            );
        }
        let what = format!("{mode}: after the refusals");
        planes.upload_checked_last(&g, registered, seed + 2, &what);
    }
}
