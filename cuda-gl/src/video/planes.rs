//! [`VideoPlanes`]: a frame's luma and chroma planes copied on the GPU into two GL textures of
//! the application's, for a shader that converts them itself.

use super::layout::{VideoFormat, VideoLayout};
use crate::TextureName;
use crate::context::Context;
use crate::error::{Result, UsageError, VideoError};
use crate::gl_object::{ImageTarget, RegisterFlags};
use crate::graphics::{ArrayFormat, MappedArray, RegisteredImage, map_all};
use crate::source::{ShowSource, memory_of};
use crate::stream::AsStream;
use std::sync::Arc;

/// The planes of NV12 or P010 frames in two 2-D GL textures of the application's, registered
/// with CUDA and written on the GPU with no host copy: the **luma** texture of the frame's size
/// with one channel (`GL_R8` for NV12, `GL_R16` for P010), and the **chroma** texture of
/// `ceil(width / 2)` x `ceil(height / 2)` with two channels (`GL_RG8`, `GL_RG16`: Cb in `.r`,
/// Cr in `.g`). Row 0 of each plane is the texture's first row.
///
/// Sampling: texel `(x, y)` of the luma is the frame's pixel `(x, y)`; its chroma pair is chroma
/// texel `(x / 2, y / 2)` (the "left" siting of H.264, HEVC and AV1 streams). A shader that
/// samples the chroma at the luma's normalized coordinate with `GL_NEAREST` gets that texel
/// for an even size; P010's samples are in the high 10 bits of each 16-bit value (the value
/// read from an `R16` texture, times 65535, shifted right by 6). The colour equations are in
/// the [module docs](super).
///
/// The textures stay the application's: it deletes them after dropping this value (which
/// unregisters them), and never deletes them before.
#[derive(Debug)]
pub struct VideoPlanes {
    luma: RegisteredImage,
    chroma: RegisteredImage,
    format: VideoFormat,
}

impl VideoPlanes {
    /// Registers `luma` and `chroma` (2-D textures in the GL context current on this thread)
    /// for the planes of `format` frames with CUDA context `ctx`. Their sizes and texel formats
    /// are checked against each frame at [`upload`](Self::upload), so they may be given new
    /// storage between frames of another size (register them again then).
    ///
    /// # Errors
    /// As [`RegisteredImage::register`] (no GL context current, a texture of another GPU's GL,
    /// a name that is no texture, one registered already).
    pub fn register(
        ctx: &Arc<Context>,
        luma: TextureName,
        chroma: TextureName,
        format: VideoFormat,
    ) -> Result<VideoPlanes> {
        let flags = RegisterFlags::WRITE_DISCARD;
        Ok(VideoPlanes {
            luma: RegisteredImage::register(ctx, luma, ImageTarget::Texture2D, flags)?,
            chroma: RegisteredImage::register(ctx, chroma, ImageTarget::Texture2D, flags)?,
            format,
        })
    }

    /// The frame format the textures hold.
    pub fn format(&self) -> VideoFormat {
        self.format
    }

    /// Copies the frame of `layout` at the start of `src` into the two textures on the GPU, in
    /// `stream`'s order (after the work queued on it before, the decoder's say). The textures
    /// are unmapped on `stream` after the copies, so the GL commands this thread issues in
    /// their context after this returns see the planes. The CPU does not wait for the copies.
    ///
    /// # Errors
    /// [`VideoError::PlaneFormat`] for a frame of another format than registered;
    /// [`VideoError::FrameTooSmall`] when `src` holds fewer bytes than `layout` spans;
    /// [`UsageError::WrongCudaContext`] for a buffer of another context;
    /// [`VideoError::PlaneTexture`] when a texture's size or texel format does not hold its
    /// plane (nothing is copied); the errors of mapping and unmapping the textures (their GL
    /// context not current, a capturing stream) and of the copies.
    pub fn upload<Src: ShowSource + ?Sized>(
        &mut self,
        src: &Src,
        layout: VideoLayout,
        stream: &impl AsStream,
    ) -> Result<()> {
        const CALL: &str = "VideoPlanes::upload";
        if layout.format() != self.format {
            return Err(VideoError::PlaneFormat {
                call: CALL,
                frame: format!("{:?}", layout.format()),
                planes: format!("{:?}", self.format),
            }
            .into());
        }
        let (ptr, bytes, ctx) = memory_of(src);
        if ctx.raw() != self.luma.context().raw() {
            return Err(UsageError::WrongCudaContext {
                what: "device buffer",
                owner: "the video planes".into(),
            }
            .into());
        }
        layout.check_fits(CALL, "the device buffer", bytes)?;
        let chroma_ptr = ptr.byte_add(layout.chroma_offset())?;
        let batch = map_all((&mut self.luma, &mut self.chroma), stream)?;
        let (luma, chroma) = batch.views();
        let (luma, chroma) = (luma.array(0, 0)?, chroma.array(0, 0)?);
        let sample = match self.format {
            VideoFormat::Nv12 => ArrayFormat::UNSIGNED_INT8,
            VideoFormat::P010 => ArrayFormat::UNSIGNED_INT16,
        };
        check_plane(&luma, "luma", layout.size(), 1, sample)?;
        check_plane(&chroma, "chroma", layout.chroma_size(), 2, sample)?;
        // SAFETY: (1) of `copy_from_pitched`: the planes lie in `src` (checked by
        // `check_fits`: `height` luma rows of `luma_row_bytes` at `luma_pitch`, the chroma
        // rows after `chroma_offset`), device memory of the textures' context (checked), which
        // safe code frees or writes only after the work queued on `stream` (a `DeviceBuffer`'s
        // free waits for it); each array's row is its plane's row (checked just above).
        unsafe {
            luma.copy_from_pitched(ptr.as_raw(), layout.luma_pitch())?;
            chroma.copy_from_pitched(chroma_ptr.as_raw(), layout.chroma_pitch())?;
        }
        batch.unmap()
    }
}

/// Refuses an array that is not `size` of `channels` channels of `sample`.
fn check_plane(
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
        call: "VideoPlanes::upload",
        plane,
        got: describe(got.0, got.1, got.2, got.3),
        want: describe(width as usize, height as usize, channels, sample),
    }
    .into())
}
