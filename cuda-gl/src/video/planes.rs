//! [`VideoPlanes`]: a frame's luma and chroma planes copied on the GPU into two GL textures of
//! the application's, for a shader that converts them itself.

use super::layout::{VideoFormat, VideoLayout};
use super::plane_check::{
    check_array, check_chroma_size, check_frame_size, check_storage, internal_formats,
};
use crate::TextureName;
use crate::context::Context;
use crate::error::{Result, UsageError, VideoError};
use crate::gl_object::{ImageTarget, RegisterFlags};
use crate::glapi::{current_gl, query};
use crate::graphics::{ArrayFormat, MappedArray, RegisteredImage, on_private_stream};
use crate::memory::DevicePtr;
use crate::result;
use crate::source::{ShowSource, memory_of};
use crate::stream::AsStream;
use std::sync::Arc;

/// The planes of NV12 or P010 frames in two 2-D GL textures of the application's, registered
/// with CUDA and written on the GPU with no host copy: the **luma** texture of the frame's size
/// with one channel (`GL_R8` for NV12, `GL_R16` for P010), and the **chroma** texture of
/// `ceil(width / 2)` x `ceil(height / 2)` with two channels (`GL_RG8`, `GL_RG16`: Cb in `.r`,
/// Cr in `.g`). Level 0 of each is written, row 0 of each plane its first row.
///
/// The textures need **immutable storage** (`glTexStorage2D`) of exactly these internal
/// formats: [`register`](Self::register) asks GL for their storage once and refuses any other
/// (mutable storage, which GL calls may respecify at any time; integer formats such as
/// `GL_R8UI`, which hold the same bytes but sample differently), and
/// [`upload`](Self::upload) checks each frame against it before CUDA maps anything.
///
/// Sampling: texel `(x, y)` of the luma is the frame's pixel `(x, y)`; its chroma pair is chroma
/// texel `(x / 2, y / 2)` (the "left" siting of H.264, HEVC and AV1 streams), for any size:
/// `texelFetch(chroma, ivec2(x, y) / 2, 0)` in GLSL. (Sampling the chroma at the luma's
/// normalized coordinate with `GL_NEAREST` gives the same texel only for even sides.) P010's
/// samples are the high 10 bits of each 16-bit value: `uint(round(v * 65535.0)) >> 6` of the
/// value `v` read from an `R16` texture. The colour equations are in the [module docs](super).
///
/// The textures stay the application's: it deletes them after dropping this value (which
/// unregisters them), and never before. For frames of another size, drop this value and
/// register textures of that size.
#[derive(Debug)]
pub struct VideoPlanes {
    luma: RegisteredImage,
    chroma: RegisteredImage,
    format: VideoFormat,
    /// The luma texture's size, as GL reported it at registration (immutable storage: no GL
    /// call changes it); the chroma texture's is half of it, rounded up (checked then too).
    size: (u32, u32),
}

impl VideoPlanes {
    /// Registers `luma` and `chroma` (2-D textures in the GL context current on this thread)
    /// for the planes of `format` frames with CUDA context `ctx`, once GL says that their
    /// storage is immutable, of the planes' internal formats (`GL_R8` + `GL_RG8` for NV12,
    /// `GL_R16` + `GL_RG16` for P010), and the chroma half the luma's size rounded up. Frames
    /// must then have the luma texture's size. The names are taken as
    /// [`RegisteredImage::register`] takes them: a `u32`, a [`TextureName`], or (feature
    /// `glow`) a glow `NativeTexture`. The textures' storage is asked of GL here: by name in
    /// an OpenGL 4.5 context; before 4.5 through a bind, which consumes the GL errors the
    /// application left pending (`glGetError` returns each once): check yours first there.
    ///
    /// # Errors
    /// As [`RegisteredImage::register`]: no GL context current, a texture of another GPU's GL,
    /// a name that is no texture or one of another target than `GL_TEXTURE_2D`
    /// ([`Error::WrongImageTarget`](crate::Error::WrongImageTarget)), one registered
    /// already; [`VideoError::PlaneStorage`] for a texture of mutable storage;
    /// [`VideoError::PlaneTexture`] for another internal format, or a chroma texture of
    /// another size; [`Error::MissingGlFunction`](crate::Error::MissingGlFunction) on an
    /// OpenGL ES 3.0 context (no `glGetTexLevelParameteriv`).
    pub fn register(
        ctx: &Arc<Context>,
        luma: impl Into<TextureName>,
        chroma: impl Into<TextureName>,
        format: VideoFormat,
    ) -> Result<VideoPlanes> {
        let names = [luma.into().0, chroma.into().0];
        // Not WRITE_DISCARD: levels above 0, and the contents of a texture whose upload was
        // refused after the map, stay as the application left them.
        let flags = RegisterFlags::NONE;
        let target = ImageTarget::Texture2D;
        let luma = RegisteredImage::register(ctx, names[0], target, flags)?;
        let chroma = RegisteredImage::register(ctx, names[1], target, flags)?;
        // The registrations found the GL context current and the names 2-D textures of it.
        let (_, _, fns) = current_gl("VideoPlanes::register")?;
        let [luma_format, chroma_format] = internal_formats(format);
        let storage = |name| query::texture_2d_storage(fns, name);
        let size = check_storage("luma", names[0], storage(names[0])?, luma_format)?;
        let chroma_size = check_storage("chroma", names[1], storage(names[1])?, chroma_format)?;
        check_chroma_size(size, chroma_size)?;
        Ok(VideoPlanes {
            luma,
            chroma,
            format,
            size,
        })
    }

    /// The frame format the textures hold.
    pub fn format(&self) -> VideoFormat {
        self.format
    }

    /// Copies the frame of `layout` at the start of `src` into the two textures on the GPU, in
    /// `stream`'s order (after the work queued on it before, the decoder's say). The textures
    /// are mapped, written and unmapped on cuda-gl's private stream, joined to `stream` once
    /// (see the crate docs' safety model), so the GL commands this thread issues in their
    /// context after this returns see the planes, and work queued on `stream` later follows
    /// the copies. The CPU does not wait for the copies:
    /// write `src` again only in work ordered after `stream`'s.
    ///
    /// # Errors
    /// Refused before the textures are mapped, leaving them as they were:
    /// [`VideoError::PlaneFormat`] for a frame of another format than registered;
    /// [`UsageError::WrongCudaContext`] for a buffer of another context;
    /// [`VideoError::FrameTooSmall`] when `src` holds fewer bytes than `layout` spans;
    /// [`VideoError::PlaneTexture`] for a frame of another size than the luma texture; the
    /// refusals of the map (the textures' GL context not current, a capturing stream). Then
    /// the driver's errors of the map, the copies and the unmap, and
    /// [`VideoError::PlaneTexture`] when the arrays CUDA maps do not hold the planes (storage
    /// changed since the registration: nothing is copied).
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
        check_frame_size(layout.size(), self.size)?;
        // SAFETY: (1) of `copy_planes`: the planes lie in `src` (checked by `check_fits`),
        // device memory of the textures' context (checked); a `DeviceBuffer` is freed only
        // after the device's work, and what safe code writes into it on another stream
        // unordered with `stream` races with the copy on the GPU (a torn plane, as for
        // `DisplayTarget::show`), never outside it.
        unsafe {
            copy_planes(
                CALL,
                [&mut self.luma, &mut self.chroma],
                ptr,
                &layout,
                stream,
            )
        }
    }
}

/// Maps the `luma` and `chroma` textures together, checks that the arrays CUDA maps hold the
/// planes of `layout`, copies each plane of the frame at `ptr` into its array
/// (`cuMemcpy2DAsync`), and unmaps both, all on cuda-gl's private stream in one run joined to
/// `stream` ([`on_private_stream`]: one join, where a map on `stream` with each copy joined on
/// its own made GL wait four times as long): GL's commands issued in the textures' context
/// after this returns see the planes. Errors name `call`. What the GL [`VideoPlanes`] and the
/// GL route of the wgpu video planes do at each upload.
///
/// # Safety
/// 1. The frame of `layout` lies at `ptr` (`layout.bytes()` bytes), device memory of the
///    textures' context, which stays allocated and is not written until the work queued on
///    `stream` before this returns has run.
///
/// # Errors
/// The refusals and the driver's errors of the map, the copies and the unmap;
/// [`VideoError::PlaneTexture`] when the arrays do not hold the planes (nothing is copied).
pub(crate) unsafe fn copy_planes(
    call: &'static str,
    [luma, chroma]: [&mut RegisteredImage; 2],
    ptr: DevicePtr<'_>,
    layout: &VideoLayout,
    stream: &impl AsStream,
) -> Result<()> {
    let chroma_ptr = ptr.byte_add(layout.chroma_offset())?;
    let sample = match layout.format() {
        VideoFormat::Nv12 => ArrayFormat::UNSIGNED_INT8,
        VideoFormat::P010 => ArrayFormat::UNSIGNED_INT16,
    };
    let copy_in = |[luma, chroma]: [MappedArray<'_>; 2], p| {
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
    on_private_stream(
        [luma, chroma],
        stream,
        "cuGraphicsMapResources (not called)",
        copy_in,
    )
}
