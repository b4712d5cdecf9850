//! What [`VideoPlanes`](super::VideoPlanes) checks of its textures and frames: the textures'
//! storage as GL reports it, once, at registration; each frame's size against it before CUDA
//! maps anything (so that a refused upload never maps the textures); and, after the map, the
//! arrays CUDA hands out, which the copies are sized by.

use super::layout::VideoFormat;
use crate::error::{Result, VideoError};
use crate::glapi::GlFns;
use crate::glapi::query::{self, TextureStorage};
use crate::graphics::{ArrayFormat, MappedArray};

/// The GL internal formats of the luma and the chroma textures of `format` frames.
pub(super) fn internal_formats(format: VideoFormat) -> [u32; 2] {
    match format {
        VideoFormat::Nv12 => [gl::R8, gl::RG8],
        VideoFormat::P010 => [gl::R16, gl::RG16],
    }
}

/// A GL internal format as errors name it.
fn format_name(internal: u32) -> String {
    match internal {
        gl::R8 => "GL_R8".into(),
        gl::RG8 => "GL_RG8".into(),
        gl::R16 => "GL_R16".into(),
        gl::RG16 => "GL_RG16".into(),
        other => format!("GL internal format {other:#06x}"),
    }
}

/// Asks GL for the storage of the `[luma, chroma]` textures `names` (in the current context,
/// whose table is `fns`) and refuses any that cannot hold the planes of `format` frames
/// ([`check_storage`], [`check_chroma_size`]), naming `call`; returns the luma's size. What
/// [`VideoPlanes::new`](super::VideoPlanes::new) asks of the textures, and the staged mode again
/// before each upload (where no mapped array tells of storage changed since).
///
/// # Errors
/// As [`check_storage`] and [`check_chroma_size`]; [`query::texture_2d_storage`]'s.
pub(super) fn check_textures(
    fns: &GlFns,
    call: &'static str,
    names: [u32; 2],
    format: VideoFormat,
) -> Result<(u32, u32)> {
    let [luma_format, chroma_format] = internal_formats(format);
    let storage = |name| query::texture_2d_storage(fns, name);
    let size = check_storage(call, "luma", names[0], storage(names[0])?, luma_format)?;
    let chroma = check_storage(call, "chroma", names[1], storage(names[1])?, chroma_format)?;
    check_chroma_size(call, size, chroma)?;
    Ok(size)
}

/// Refuses the storage GL reports for the `plane` texture `texture` unless it is immutable and
/// of internal format `want` (one of [`internal_formats`]); returns level 0's size.
///
/// # Errors
/// [`VideoError::PlaneStorage`] for mutable storage, or a name GL knows no texture by;
/// [`VideoError::PlaneTexture`] for another internal format.
fn check_storage(
    call: &'static str,
    plane: &'static str,
    texture: u32,
    storage: Option<TextureStorage>,
    want: u32,
) -> Result<(u32, u32)> {
    let refused = |storage: &str| VideoError::PlaneStorage {
        call,
        plane,
        texture,
        storage: storage.to_owned(),
    };
    let Some(storage) = storage else {
        return Err(
            refused("no storage GL knows of (no texture of the current GL context)").into(),
        );
    };
    if !storage.immutability_known {
        return Err(refused(
            "storage this GL context cannot tell immutable (a context below GL 4.2 without \
             ARB_texture_storage, which has no glTexStorage2D either: make a GL 4.2+ context)",
        )
        .into());
    }
    if storage.immutable_levels.is_none() {
        return Err(refused("mutable storage (glTexImage2D), which GL calls may respecify").into());
    }
    if storage.internal_format != want {
        let (w, h) = storage.size;
        return Err(VideoError::PlaneTexture {
            call,
            plane,
            got: format!("{w} x {h} of {}", format_name(storage.internal_format)),
            want: format_name(want),
        }
        .into());
    }
    Ok(storage.size)
}

/// Refuses a chroma texture that is not half the luma's size, rounded up.
///
/// # Errors
/// [`VideoError::PlaneTexture`].
fn check_chroma_size(call: &'static str, luma: (u32, u32), chroma: (u32, u32)) -> Result<()> {
    let want = (luma.0.div_ceil(2), luma.1.div_ceil(2));
    let why = || {
        format!(
            "(half the luma texture's {} x {}, rounded up)",
            luma.0, luma.1
        )
    };
    check_size(call, "chroma", chroma, want, why)
}

/// Refuses a frame of another size than the luma texture (the chroma texture's size follows,
/// checked by [`check_chroma_size`]).
///
/// # Errors
/// [`VideoError::PlaneTexture`] naming the luma.
pub(super) fn check_frame_size(frame: (u32, u32), luma: (u32, u32)) -> Result<()> {
    let why = || "(the frame's size)".to_owned();
    check_size("VideoPlanes::upload", "luma", luma, frame, why)
}

/// Refuses `plane`'s texture of size `got` unless it is `want` (`why`: what `want` is).
///
/// # Errors
/// [`VideoError::PlaneTexture`] naming `call` and `plane`.
fn check_size(
    call: &'static str,
    plane: &'static str,
    got: (u32, u32),
    want: (u32, u32),
    why: impl FnOnce() -> String,
) -> Result<()> {
    if got == want {
        return Ok(());
    }
    Err(VideoError::PlaneTexture {
        call,
        plane,
        got: format!("{} x {}", got.0, got.1),
        want: format!("{} x {} {}", want.0, want.1, why()),
    }
    .into())
}

/// Refuses a mapped array that is not `size` of `channels` channels of `sample`, naming
/// `call`. The copies are sized by the array, so this is what keeps them inside the plane's
/// rows whatever the driver maps; after the checks above it refuses only storage that changed
/// since the registration.
///
/// # Errors
/// [`VideoError::PlaneTexture`].
pub(super) fn check_array(
    call: &'static str,
    array: &MappedArray<'_>,
    plane: &'static str,
    (width, height): (u32, u32),
    channels: u32,
    sample: ArrayFormat,
) -> Result<()> {
    let got = (
        array.width(),
        array.height(),
        array.channels(),
        array.format(),
    );
    if got == (width as usize, height as usize, channels, sample) && !array.is_layered() {
        return Ok(());
    }
    let describe = |w: usize, h: usize, c: u32, f: ArrayFormat| {
        format!("{w} x {h} x {c} channel(s) of {:?}", f.0)
    };
    Err(VideoError::PlaneTexture {
        call,
        plane,
        got: describe(got.0, got.1, got.2, got.3),
        want: describe(width as usize, height as usize, channels, sample),
    }
    .into())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::error::Error;

    const NEW: &str = "VideoPlanes::new";

    fn storage(size: (u32, u32), internal_format: u32, levels: Option<u32>) -> TextureStorage {
        TextureStorage {
            size,
            internal_format,
            immutable_levels: levels,
            immutability_known: true,
        }
    }

    fn video(e: Error) -> VideoError {
        match e {
            Error::Video(v) => v,
            other => panic!("not a VideoError: {other}"),
        }
    }

    #[test]
    fn immutable_textures_of_the_planes_formats_pass() {
        for (format, sizes) in [
            (VideoFormat::Nv12, [(1920, 1080), (960, 540)]),
            (VideoFormat::P010, [(1001, 333), (501, 167)]),
        ] {
            let [luma, chroma] = internal_formats(format);
            let l = check_storage(NEW, "luma", 1, Some(storage(sizes[0], luma, Some(1))), luma);
            let c = check_storage(
                NEW,
                "chroma",
                2,
                Some(storage(sizes[1], chroma, Some(1))),
                chroma,
            );
            assert_eq!((l.ok(), c.ok()), (Some(sizes[0]), Some(sizes[1])));
            assert!(check_chroma_size(NEW, sizes[0], sizes[1]).is_ok());
            assert!(check_frame_size(sizes[0], sizes[0]).is_ok());
        }
    }

    #[test]
    fn mutable_storage_and_other_formats_are_refused_at_registration() {
        let e = video(
            check_storage(NEW, "luma", 7, Some(storage((4, 4), gl::R8, None)), gl::R8).unwrap_err(),
        );
        assert!(
            matches!(&e, VideoError::PlaneStorage { plane: "luma", texture: 7, storage, .. }
                if storage.contains("mutable")),
            "{e}"
        );
        assert!(e.to_string().contains("glTexStorage2D"), "{e}");
        // A context that cannot say (below GL 4.2 without ARB_texture_storage): refused as
        // such, not as mutable storage.
        let unknown = TextureStorage {
            immutability_known: false,
            ..storage((4, 4), gl::R8, None)
        };
        let e = video(check_storage(NEW, "luma", 7, Some(unknown), gl::R8).unwrap_err());
        assert!(
            matches!(&e, VideoError::PlaneStorage { storage, .. }
                if storage.contains("cannot tell immutable") && !storage.contains("mutable storage")),
            "{e}"
        );
        let e = video(check_storage(NEW, "chroma", 8, None, gl::RG8).unwrap_err());
        assert!(
            matches!(e, VideoError::PlaneStorage { texture: 8, .. }),
            "{e}"
        );
        // 16-bit planes into an 8-bit texture, and integer textures, which sample differently.
        for (got, want) in [(gl::R8, gl::R16), (gl::R8UI, gl::R8), (gl::RGBA8, gl::RG8)] {
            let e = check_storage(NEW, "luma", 3, Some(storage((4, 4), got, Some(1))), want);
            let e = video(e.unwrap_err());
            assert!(
                matches!(&e, VideoError::PlaneTexture { call: NEW, got: g, want: w, .. }
                    if g.contains("4 x 4") && w.contains(&format_name(want))),
                "{e}"
            );
        }
    }

    #[test]
    fn the_chroma_is_half_the_luma_rounded_up_and_frames_match_the_luma() {
        assert!(check_chroma_size(NEW, (1001, 333), (501, 167)).is_ok());
        for chroma in [(500, 167), (501, 166), (1001, 333)] {
            let e = video(check_chroma_size(NEW, (1001, 333), chroma).unwrap_err());
            assert!(
                matches!(&e, VideoError::PlaneTexture { plane: "chroma", want, .. }
                    if want.starts_with("501 x 167")),
                "{e}"
            );
        }
        let e = video(check_frame_size((64, 36), (64, 38)).unwrap_err());
        assert!(
            matches!(
                &e,
                VideoError::PlaneTexture {
                    call: "VideoPlanes::upload",
                    plane: "luma",
                    ..
                }
            ),
            "{e}"
        );
    }
}

#[cfg(all(test, feature = "egl"))]
mod gl_tests;
#[cfg(all(test, feature = "egl"))]
mod target_tests;
