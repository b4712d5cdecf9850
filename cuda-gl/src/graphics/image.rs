//! GL textures and renderbuffers registered with CUDA: mapped as CUDA arrays, surfaces and
//! textures.

use super::array::{MappedArray, MappedMipmappedArray, mapped_array, mapped_mipmapped_array};
use super::registered::{GlImage, Mapped, Registered};
use super::surface::{Surface, SurfaceObject, cached_surface, create_surface, layer_surfaces};
use super::texture::{TexDesc, TexObject, create_tex};
use super::{Claiming, ImageTarget, Kind, RegisterFlags, Registration};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::gl_name::{ImageName, RenderbufferName, TextureName};
use crate::glapi::{GlOwner, query};
use crate::stream::AsStream;
use std::sync::Arc;

/// A GL texture or renderbuffer registered with CUDA. Unregistered on drop. What every
/// registration has (unregistering, map flags, the thread rules) is [`Registered`]'s.
///
/// Mapped, it gives CUDA arrays (one per array index and mip level), never a linear pointer:
/// asking an image for a device pointer does not compile.
pub type RegisteredImage = Registered<GlImage>;

impl RegisteredImage {
    /// Registers the GL texture `texture`, created with `target`, in `ctx`. The GL context that
    /// owns it must be current on this thread, and the texture must have storage.
    ///
    /// # Errors
    /// As [`RegisteredBuffer::register`](crate::RegisteredBuffer::register); in addition,
    /// [`Error::WrongImageTarget`] when `target` is not the one the texture was created with
    /// (asked of GL when the context is OpenGL 4.5 or newer), and [`Error::UnsupportedImage`]
    /// for a format CUDA cannot register, or cannot use with `SURFACE_LOAD_STORE` (e.g. a depth
    /// or compressed format).
    #[doc(alias = "cuGraphicsGLRegisterImage")]
    pub fn register(
        ctx: &Arc<Context>,
        texture: impl Into<TextureName>,
        target: ImageTarget,
        flags: RegisterFlags,
    ) -> Result<Self> {
        let name = texture.into().0;
        let reg = Registration::register(ctx, name, Kind::Image(target), flags, Claiming::Now)?;
        Ok(Self::from_registration(reg))
    }

    /// Registers texture `texture` of cuda-gl's own, which the caller has claimed and keeps
    /// claimed until the texture is deleted (after this registration is gone).
    pub(crate) fn register_own_texture(
        ctx: &Arc<Context>,
        texture: u32,
        flags: RegisterFlags,
    ) -> Result<Self> {
        let kind = Kind::Image(ImageTarget::Texture2D);
        let reg = Registration::register(ctx, texture, kind, flags, Claiming::Held)?;
        Ok(Self::from_registration(reg))
    }

    /// Registers the GL renderbuffer `renderbuffer` in `ctx`. The GL context that owns it must
    /// be current on this thread, and it must have storage.
    ///
    /// # Errors
    /// As [`register`](Self::register).
    #[doc(alias = "cuGraphicsGLRegisterImage")]
    pub fn register_renderbuffer(
        ctx: &Arc<Context>,
        renderbuffer: impl Into<RenderbufferName>,
        flags: RegisterFlags,
    ) -> Result<Self> {
        let name = renderbuffer.into().0;
        let reg = Registration::register(ctx, name, Kind::Renderbuffer, flags, Claiming::Now)?;
        Ok(Self::from_registration(reg))
    }

    /// Registers the GL texture `texture` with the target GL reports for it
    /// (`glGetTextureParameteriv(GL_TEXTURE_TARGET)`), so that no [`ImageTarget`] has to be
    /// given. Needs an OpenGL 4.5 context, current (cuda-gl asks it through its own entry
    /// points, so the application's GL loader does not matter). Renderbuffers register with
    /// [`register_renderbuffer`](Self::register_renderbuffer).
    ///
    /// # Errors
    /// [`Error::NoGlContext`] when no GL context is current; [`Error::UnknownTextureTarget`]
    /// when `texture` is not a texture of the current context, the target cannot be asked (a
    /// context older than 4.5), or CUDA cannot register it (e.g.
    /// `GL_TEXTURE_1D` or a multisample texture); otherwise as [`register`](Self::register).
    #[doc(alias = "cuGraphicsGLRegisterImage")]
    #[doc(alias = "glGetTextureParameteriv")]
    pub fn register_texture(
        ctx: &Arc<Context>,
        texture: impl Into<TextureName>,
        flags: RegisterFlags,
    ) -> Result<Self> {
        let texture = texture.into().0;
        let (_, fns) =
            GlOwner::current("cuGraphicsGLRegisterImage (not called: no GL context is current)")?;
        let unknown = |reason: &str| Error::UnknownTextureTarget {
            name: texture,
            reason: reason.to_string(),
        };
        let target = match query::texture_target(fns, texture)? {
            Some(gl_enum) => ImageTarget::from_gl(gl_enum).ok_or_else(|| {
                unknown(&format!(
                    "its target 0x{gl_enum:04x} cannot be registered with CUDA"
                ))
            })?,
            None if !query::exists(fns, Kind::Image(ImageTarget::Texture2D), texture) => {
                return Err(unknown("it is not a texture of the current GL context"));
            }
            None => {
                return Err(unknown(
                    "GL cannot be asked for a texture's target before OpenGL 4.5 \
                     (GL_TEXTURE_TARGET); register it with RegisteredImage::register and its \
                     target, which cuda-gl then checks",
                ));
            }
        };
        Self::register(ctx, texture, target, flags)
    }

    /// Maps the image on `stream`. The returned guard unmaps on the same stream when dropped.
    ///
    /// # Errors
    /// [`UsageError::WrongCudaContext`](crate::UsageError::WrongCudaContext) for a stream of
    /// another context; [`Error::NoGlContext`] or
    /// [`Error::WrongGlContext`] when the GL context that registered it is not current;
    /// [`Error::MappingStateLost`] when the driver's state no longer matches; the driver's error
    /// from `cuGraphicsMapResources`.
    #[doc(alias = "cuGraphicsMapResources")]
    pub fn map<'a, S: AsStream>(&'a mut self, stream: &'a S) -> Result<MappedImage<'a>> {
        self.reg.map_on(stream)?;
        Ok(Mapped::new(&mut self.reg, stream, ()))
    }

    /// The GL name of the texture or renderbuffer.
    pub fn gl_name(&self) -> ImageName {
        match self.reg.kind {
            Kind::Renderbuffer => ImageName::Renderbuffer(RenderbufferName(self.reg.name)),
            Kind::Image(_) | Kind::Buffer => ImageName::Texture(TextureName(self.reg.name)),
        }
    }

    /// The GL target the texture was registered with; `None` for a renderbuffer.
    pub fn target(&self) -> Option<ImageTarget> {
        match self.reg.kind {
            Kind::Image(t) => Some(t),
            Kind::Renderbuffer | Kind::Buffer => None,
        }
    }

    /// How many surface objects [`MappedImage::surface_at`] keeps cached for this image (one
    /// per array index and mip level used); they are destroyed when it is unregistered, after
    /// the work queued before its last unmap.
    pub fn cached_surfaces(&self) -> usize {
        self.reg.surfaces.len()
    }

    /// How many dropped surface and texture objects wait to be destroyed until the GPU work
    /// queued before the last unmap is done (checked, without waiting, at the next map; waited
    /// for when the image is unregistered).
    pub fn retired_objects(&self) -> usize {
        self.reg.retired.len()
    }
}

/// A mapped GL image. Arrays, surfaces and textures obtained from it borrow it, so none of them
/// can outlive the mapping. Dropping it unmaps on the stream it was mapped on ([`Mapped`]).
pub type MappedImage<'a> = Mapped<'a, GlImage>;

impl MappedImage<'_> {
    /// The CUDA array of layer (or cube face) `index` at mip `level`.
    ///
    /// # Errors
    /// [`Error::InvalidSubresource`] when the image has no such index or level; otherwise the
    /// driver's error from `cuGraphicsSubResourceGetMappedArray`.
    #[doc(alias = "cuGraphicsSubResourceGetMappedArray")]
    pub fn array(&self, index: u32, level: u32) -> Result<MappedArray<'_>> {
        mapped_array(self.reg, self.stream, index, level)
    }

    /// The whole mipmapped array. For a `GL_TEXTURE_2D_ARRAY`, each of its levels is one
    /// layered array over all layers ([`MappedArray::is_layered`], depth = layer count), while
    /// [`array`](Self::array)`(layer, level)` is the 2-D array of one layer.
    ///
    /// # Errors
    /// The driver's error from `cuGraphicsResourceGetMappedMipmappedArray` (renderbuffers have
    /// none).
    #[doc(alias = "cuGraphicsResourceGetMappedMipmappedArray")]
    pub fn mipmapped_array(&self) -> Result<MappedMipmappedArray<'_>> {
        mapped_mipmapped_array(self.reg, self.stream)
    }

    /// The surface object over array index 0, mip level 0, for `surf2Dwrite`/`surf2Dread` in a
    /// kernel: the fast path for a kernel to write a GL texture in place (see the crate docs,
    /// "The fast path"). The same as [`MappedImage::surface_at`]`(0, 0)`.
    ///
    /// # Errors
    /// As [`MappedImage::surface_at`].
    #[doc(alias = "cuSurfObjectCreate")]
    pub fn surface(&self) -> Result<Surface<'_>> {
        self.surface_at(0, 0)
    }

    /// The surface object over array index (layer or cube face) `index` at mip `level`, for
    /// `surf2Dwrite`/`surf2Dread` in a kernel.
    ///
    /// The object is cached on the registration, one per (index, level), and reused by later
    /// mappings while the driver returns the same array for that sub-resource (it does, frame
    /// after frame, for an unchanged texture). When the array changes (another handle, size or
    /// format), the old object is destroyed and a new one created. All of them are destroyed
    /// when the image is unregistered or dropped. A [`Surface`] borrows this guard, so it is
    /// only usable while the image is mapped: keeping one past the unmap does not compile.
    ///
    /// Several surfaces of one mapping may be alive at once (e.g. one per layer of a 2D array
    /// texture, to render K frames under one map).
    ///
    /// # Errors
    /// [`UsageError::NotSurfaceRegistered`](crate::UsageError::NotSurfaceRegistered) unless the
    /// image was registered with `SURFACE_LOAD_STORE`;
    /// [`Error::InvalidSubresource`] for an index or level the image lacks; the driver's error
    /// from `cuGraphicsSubResourceGetMappedArray` or `cuSurfObjectCreate`.
    #[doc(alias = "cuSurfObjectCreate")]
    #[doc(alias = "cuGraphicsSubResourceGetMappedArray")]
    pub fn surface_at(&self, index: u32, level: u32) -> Result<Surface<'_>> {
        cached_surface(self.reg, self.stream, index, level)
    }

    /// The cached surfaces of layers `first_layer..first_layer + N` at mip `level`, for a
    /// kernel that writes `N` layers of a `GL_TEXTURE_2D_ARRAY` (or `N` cube faces) in one
    /// launch. Pass the array as one argument: it is a C struct of `N` surface handles
    /// (`struct { cudaSurfaceObject_t s[N]; }` by value, see
    /// [`KernelParam`](crate::KernelParam) for `[T; N]`).
    ///
    /// Each surface is [`surface_at`](Self::surface_at)`(first_layer + i, level)`, cached the
    /// same way.
    ///
    /// # Errors
    /// As [`surface_at`](Self::surface_at), for the first layer that fails;
    /// [`UsageError::TooLarge`](crate::UsageError::TooLarge) when the layers run past
    /// `u32::MAX`.
    #[doc(alias = "cuSurfObjectCreate")]
    #[doc(alias = "cuGraphicsSubResourceGetMappedArray")]
    pub fn layer_surfaces<const N: usize>(
        &self,
        first_layer: u32,
        level: u32,
    ) -> Result<[Surface<'_>; N]> {
        layer_surfaces(self.reg, self.stream, first_layer, level)
    }

    /// Creates a surface object over `array`. It cannot outlive the mapping; when it drops, it
    /// is destroyed as soon as the work queued before the unmap is done.
    ///
    /// # Errors
    /// [`UsageError::ArrayOfAnotherMapping`](crate::UsageError::ArrayOfAnotherMapping) when
    /// `array` is of another mapping; the driver's error from `cuSurfObjectCreate`.
    #[doc(alias = "cuSurfObjectCreate")]
    pub fn create_surface<'m>(&'m self, array: &MappedArray<'m>) -> Result<SurfaceObject<'m>> {
        create_surface(self.reg, array)
    }

    /// Creates a texture object over `array` (sampled reads, filtering). It cannot outlive the
    /// mapping; when it drops, it is destroyed as soon as the work queued before the unmap is
    /// done.
    ///
    /// Mind [`TexDesc`]'s default: it reads integer formats (such as RGBA8) as integers;
    /// for `tex2D<float4>` on an RGBA8 texture use [`TexDesc::normalized_float`].
    ///
    /// # Errors
    /// [`UsageError::ArrayOfAnotherMapping`](crate::UsageError::ArrayOfAnotherMapping) when
    /// `array` is of another mapping; the driver's error from `cuTexObjectCreate`.
    #[doc(alias = "cuTexObjectCreate")]
    pub fn create_tex<'m>(
        &'m self,
        array: &MappedArray<'m>,
        desc: &TexDesc,
    ) -> Result<TexObject<'m>> {
        create_tex(self.reg, array, desc)
    }
}
