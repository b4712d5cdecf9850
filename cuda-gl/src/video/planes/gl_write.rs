//! The GL half of the copying modes of [`VideoPlanes`](super::VideoPlanes) (staged, stream):
//! the textures claimed while the planes hold them, and GL's writes of both planes into them
//! (`glTexSubImage2D`, from client memory or from a buffer of cuda-gl's bound as the pixel
//! unpack buffer) under neutral pixel-store and pixel-transfer state, the application's state
//! put back after.

use super::super::layout::{VideoFormat, VideoLayout};
use super::super::plane_check::{check_frame_size, check_textures};
use super::{PlaneFrame, PlaneTextures};
use crate::error::{Error, Result};
use crate::gl_object::{ImageTarget, Kind};
use crate::glapi::claim::{self, Claim};
use crate::glapi::{GlFns, GlOwner, UnpackState, bind_checked};
use cuda_gl_sys as sys;

/// The GL call an upload's GL errors are reported as.
const GL_CALL: &str = "glTexSubImage2D (a video plane)";

/// The textures a copying mode writes with GL: their context, the textures, and their claims.
#[derive(Debug)]
pub(super) struct HeldTextures {
    /// The GL context the textures are of, current at `new`: each upload checks it is current.
    owner: GlOwner,
    textures: PlaneTextures,
    /// Both textures claimed, as a registration claims them: no registration of cuda-gl's can
    /// map them (and hand CUDA a texture that GL writes) while the mode writes them.
    _claims: [Claim; 2],
}

/// Where a frame's plane is: its device address and pitch, and its row bytes and rows.
pub(super) type PlaneAt = ((sys::CUdeviceptr, usize), (usize, usize));

impl HeldTextures {
    /// `textures`, of the GL context current on this thread, claimed; and the bytes of each
    /// of their frames' planes, rows tightly packed: `[luma, chroma]`.
    ///
    /// # Errors
    /// The owner check's ([`GlOwner::current`]); as [`claim_textures`];
    /// [`VideoLayout::packed`]'s.
    pub(super) fn new(textures: PlaneTextures) -> Result<(HeldTextures, [usize; 2])> {
        let (owner, _) = GlOwner::current("VideoPlanes::new")?;
        let claims = claim_textures(owner, textures.names)?;
        let packed = VideoLayout::packed(textures.size, textures.format)?;
        let held = HeldTextures {
            owner,
            textures,
            _claims: claims,
        };
        Ok((held, plane_rows(&packed).map(|(row, rows)| row * rows)))
    }

    /// What an upload checks before any copy, naming the frame's call: the owning context
    /// current, and the textures still what `new` found (GL is asked again: no mapped array
    /// tells a copying mode of storage the application replaced) and of the frame's size. Then
    /// GL's table, and where each plane of the frame lies: `[luma, chroma]`.
    ///
    /// # Errors
    /// The owner check's; [`check_textures`]'s and [`check_frame_size`]'s; an address past the
    /// end of memory.
    pub(super) fn check_frame(
        &self,
        frame: PlaneFrame<'_>,
    ) -> Result<(&'static GlFns, [PlaneAt; 2])> {
        let PlaneFrame { call, ptr, layout } = frame;
        let fns = self.owner.check(call)?;
        let PlaneTextures { names, format, .. } = self.textures;
        let size = check_textures(fns, call, names, format)?;
        check_frame_size(layout.size(), size)?;
        let [luma, chroma] = plane_rows(layout);
        let chroma_ptr = ptr.byte_add(layout.chroma_offset())?;
        Ok((
            fns,
            [
                ((ptr.as_raw(), layout.luma_pitch()), luma),
                ((chroma_ptr.as_raw(), layout.chroma_pitch()), chroma),
            ],
        ))
    }

    /// The frame of `layout`'s planes from `source` into the textures ([`upload_planes`]).
    ///
    /// # Errors
    /// As [`upload_planes`].
    pub(super) fn write(
        &self,
        fns: &GlFns,
        layout: &VideoLayout,
        source: PlaneSource<'_>,
    ) -> Result<()> {
        let write = PlaneWrite {
            names: self.textures.names,
            sizes: [layout.size(), layout.chroma_size()],
            format: self.textures.format,
            source,
        };
        upload_planes(fns, &write)
    }
}

/// Claims both textures `names` of `owner`'s share group, as a registration claims them: no
/// registration of cuda-gl's can map them (and hand CUDA a texture that GL writes) while the
/// claims live.
///
/// # Errors
/// [`Error::AlreadyRegistered`] for a texture registered with CUDA, or claimed by other planes,
/// already (or the same texture twice); a first claim made is given up then.
fn claim_textures(owner: GlOwner, names: [u32; 2]) -> Result<[Claim; 2]> {
    let kind = Kind::Image(ImageTarget::Texture2D);
    let claim = |name| {
        claim::claim(kind, name, owner).ok_or_else(|| Error::AlreadyRegistered {
            name,
            kind: kind.describe().to_string(),
        })
    };
    Ok([claim(names[0])?, claim(names[1])?])
}

/// Each plane's row bytes and rows of `layout`'s frames: `[luma, chroma]`.
pub(super) fn plane_rows(layout: &VideoLayout) -> [(usize, usize); 2] {
    [
        (layout.luma_row_bytes(), layout.height() as usize),
        (layout.chroma_row_bytes(), layout.chroma_size().1 as usize),
    ]
}

/// Where GL takes the planes' rows, tightly packed, from.
#[derive(Debug, Clone, Copy)]
pub(super) enum PlaneSource<'a> {
    /// Client memory: each plane's bytes, read before each write returns.
    Client([&'a [u8]; 2]),
    /// A GL buffer of cuda-gl's, bound as the pixel unpack buffer for the writes: its name, its
    /// size in bytes, and each plane's offset into it (a whole number of samples).
    Buffer {
        name: u32,
        size: usize,
        offsets: [usize; 2],
    },
}

/// What GL writes: both planes from `source` into the textures `names` (level 0, of the sizes
/// in `sizes`), of `format` samples.
#[derive(Debug, Clone, Copy)]
pub(super) struct PlaneWrite<'a> {
    pub(super) names: [u32; 2],
    pub(super) sizes: [(u32, u32); 2],
    pub(super) format: VideoFormat,
    pub(super) source: PlaneSource<'a>,
}

/// Writes both planes of `write`, the luma first, with the GL errors the application left
/// pending taken first (each logged) and the unpack state neutral, the application's put back
/// after.
///
/// # Errors
/// As [`UnpackState::neutral`]; [`Error::GlCall`] when a binding did not take (a texture the
/// application deleted, in a core profile) or GL refused a write (the chroma is not written
/// after a refused luma), or putting the application's bindings back;
/// [`Error::Internal`] for a source that does not hold the planes.
pub(super) fn upload_planes(fns: &GlFns, write: &PlaneWrite<'_>) -> Result<()> {
    fns.take_pending_errors(GL_CALL);
    let state = UnpackState::neutral(fns, false)?;
    let written = write_planes(fns, write);
    state.restore(fns);
    // The write's own GL errors were asked for after each plane; one of putting the
    // application's bindings back (a texture another context deleted, say) is its own.
    let restored = fns.check("glBindTexture (putting the application's bindings back)");
    written.and(restored)
}

/// Writes each plane of `write` into its texture, the luma first, with the pixel unpack buffer
/// bound as its source says (0 for client memory) and read back. The caller made the unpack
/// state neutral and puts it back.
///
/// # Errors
/// As [`upload_planes`], less the restore's.
fn write_planes(fns: &GlFns, write: &PlaneWrite<'_>) -> Result<()> {
    let PlaneWrite {
        names,
        sizes,
        format,
        source,
    } = *write;
    let sample = match format {
        VideoFormat::Nv12 => gl::UNSIGNED_BYTE,
        VideoFormat::P010 => gl::UNSIGNED_SHORT,
    };
    let bps = format.bytes_per_sample();
    let buffer = match source {
        PlaneSource::Client(_) => 0,
        PlaneSource::Buffer { name, .. } => name,
    };
    bind_checked(
        fns,
        gl::PIXEL_UNPACK_BUFFER,
        buffer,
        "glBindBuffer (a video plane's upload)",
    )?;
    for (k, (name, (w, h))) in names.into_iter().zip(sizes).enumerate() {
        let (pixel_format, channels) = if k == 0 { (gl::RED, 1) } else { (gl::RG, 2) };
        let wanted = w as usize * h as usize * channels * bps;
        let (Ok(width), Ok(height)) = (i32::try_from(w), i32::try_from(h)) else {
            return Err(Error::GlCall {
                call: GL_CALL,
                code: gl::INVALID_VALUE,
            });
        };
        // The rows GL reads: client bytes of exactly the plane's length, or an offset into
        // the bound buffer, of whole samples (GL refuses others), with the plane's bytes inside
        // it.
        let pixels: *const std::ffi::c_void = match source {
            PlaneSource::Client(bytes) if bytes[k].len() == wanted => bytes[k].as_ptr().cast(),
            PlaneSource::Buffer { size, offsets, .. }
                if offsets[k] % bps == 0
                    && offsets[k]
                        .checked_add(wanted)
                        .is_some_and(|end| end <= size) =>
            {
                std::ptr::without_provenance(offsets[k])
            }
            _ => {
                return Err(Error::Internal {
                    what: format!("a video plane's source that does not hold a {w} x {h} plane"),
                });
            }
        };
        bind_checked(fns, gl::TEXTURE_2D, name, "glBindTexture (a video plane)")?;
        // SAFETY: a context is current (the caller checked the owner); the texture is bound
        // (read back) and holds `w` x `h` texels at level 0 (asked of GL this upload, immutable
        // storage); the unpack state is neutral (alignment 1, no row length or skips). With no
        // pixel unpack buffer bound (read back) GL reads `h` rows of `w` texels of `channels`
        // samples tightly packed from `pixels`, exactly the client bytes given (checked),
        // before the call returns; with the source's buffer bound (read back) `pixels` is an
        // offset into it, the plane's bytes lying within its size (checked), and GL reads
        // only the buffer (it refuses a read past its end).
        unsafe {
            (fns.tex_sub_image_2d)(
                gl::TEXTURE_2D,
                0,
                0,
                0,
                width,
                height,
                pixel_format,
                sample,
                pixels,
            );
        }
        // A refused luma stops before the chroma: a failed upload leaves at most the luma
        // written.
        fns.check(GL_CALL)?;
    }
    Ok(())
}

#[cfg(all(test, feature = "egl"))]
pub(super) mod tests;
