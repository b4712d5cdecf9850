//! The interop mode of [`VideoPlanes`](super::VideoPlanes): both textures registered with CUDA,
//! mapped, written by CUDA's copies and unmapped at each upload, all in one run on cuda-gl's
//! private stream (GL on the CUDA GPU).

use super::super::layout::{VideoFormat, VideoLayout};
use super::super::plane_check::check_array;
use super::PlaneFrame;
use crate::context::Context;
use crate::error::Result;
use crate::gl_object::{ImageTarget, RegisterFlags};
use crate::graphics::{ArrayFormat, MappedArray, RegisteredImage, on_private_stream};
use crate::memory::DevicePtr;
use crate::queue::{AfterWork, then};
use crate::result;
use crate::stream::AsStream;
use std::sync::Arc;

/// The interop mode's state: the two registrations.
#[derive(Debug)]
pub(super) struct Interop {
    luma: RegisteredImage,
    chroma: RegisteredImage,
}

impl Interop {
    /// Registers the `[luma, chroma]` textures `names` with `ctx`.
    ///
    /// # Errors
    /// As [`RegisteredImage::register`]: a texture of another GPU's GL
    /// ([`Error::NotNvidiaGl`](crate::Error::NotNvidiaGl),
    /// [`Error::WrongDevice`](crate::Error::WrongDevice)), one registered already.
    pub(super) fn new(ctx: &Arc<Context>, names: [u32; 2]) -> Result<Interop> {
        // Not WRITE_DISCARD: levels above 0, and the contents of a texture whose upload was
        // refused after the map, stay as the application left them.
        let flags = RegisterFlags::NONE;
        let target = ImageTarget::Texture2D;
        Ok(Interop {
            luma: RegisteredImage::register(ctx, names[0], target, flags)?,
            chroma: RegisteredImage::register(ctx, names[1], target, flags)?,
        })
    }

    /// The frame into both textures, in `stream`'s order ([`copy_planes`]); `after` runs right
    /// after the copies, in their run.
    ///
    /// # Safety
    /// 1. As [`copy_planes`]' (1), of the frame's layout at its address.
    ///
    /// # Errors
    /// As [`copy_planes`].
    pub(super) unsafe fn upload(
        &mut self,
        frame: PlaneFrame<'_>,
        stream: &impl AsStream,
        after: AfterWork<'_>,
    ) -> Result<()> {
        let PlaneFrame { call, ptr, layout } = frame;
        let textures = [&mut self.luma, &mut self.chroma];
        // SAFETY: (1).
        unsafe { copy_planes(call, textures, ptr, layout, stream, after) }
    }
}

/// Maps the `luma` and `chroma` textures together, checks that the arrays CUDA maps hold the
/// planes of `layout`, copies each plane of the frame at `ptr` into its array
/// (`cuMemcpy2DAsync`), and unmaps both, all on cuda-gl's private stream in one run joined to
/// `stream` ([`on_private_stream`]: one join, where a map on `stream` with each copy joined on
/// its own made GL wait four times as long): GL's commands issued in the textures' context
/// after this returns see the planes; `after` runs on the private stream right after the copies
/// (before the unmap), in the same run (see [`AfterWork`]). Errors name `call`. What the interop
/// mode of [`VideoPlanes`](super::VideoPlanes) and the GL route of the wgpu video planes do at
/// each upload.
///
/// # Safety
/// 1. The frame of `layout` lies at `ptr` (`layout.bytes()` bytes), device memory of the
///    textures' context, which stays allocated and is not written until the work queued on
///    `stream` before this returns has run.
///
/// # Errors
/// The refusals and the driver's errors of the map, the copies and the unmap;
/// [`VideoError::PlaneTexture`](crate::video::VideoError::PlaneTexture) when the arrays do not
/// hold the planes (nothing is copied).
pub(crate) unsafe fn copy_planes(
    call: &'static str,
    [luma, chroma]: [&mut RegisteredImage; 2],
    ptr: DevicePtr<'_>,
    layout: &VideoLayout,
    stream: &impl AsStream,
    after: AfterWork<'_>,
) -> Result<()> {
    let chroma_ptr = ptr.byte_add(layout.chroma_offset())?;
    let sample = match layout.format() {
        VideoFormat::Nv12 => ArrayFormat::UNSIGNED_INT8,
        VideoFormat::P010 => ArrayFormat::UNSIGNED_INT16,
    };
    let copy_arrays = |[luma, chroma]: [MappedArray<'_>; 2], p| {
        check_array(call, &luma, "luma", layout.size(), 1, sample)?;
        check_array(call, &chroma, "chroma", layout.chroma_size(), 2, sample)?;
        let copies = [
            luma.pitched_copy(ptr.as_raw(), layout.luma_pitch())?,
            chroma.pitched_copy(chroma_ptr.as_raw(), layout.chroma_pitch())?,
        ];
        for copy in &copies {
            // SAFETY: `copy_2d_async`'s (1): the planes lie in the frame at `ptr` (this
            // function's (1): `height` luma rows of `luma_row_bytes` at `luma_pitch`, the
            // chroma rows after `chroma_offset`), device memory of the textures' context, and
            // each array's row is its plane's row (checked just above); each array is mapped
            // until the unmap queued after this copy on the same stream; (2): `p` is the
            // private stream.
            unsafe { result::array::copy_2d_async(copy, p) }?;
        }
        Ok(())
    };
    // `after` right after the copies, whether they were queued or not (see `then`).
    let copy_in = |arrays: [MappedArray<'_>; 2], p| then(|p| copy_arrays(arrays, p), after)(p);
    on_private_stream(
        [luma, chroma],
        stream,
        "cuGraphicsMapResources (not called)",
        copy_in,
    )
}
