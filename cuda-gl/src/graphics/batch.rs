//! Mapping many resources with one driver call.

use super::array::{mapped_array, mapped_mipmapped_array};
use super::surface::{Surface, SurfaceObject, cached_surface, create_surface, layer_surfaces};
use super::texture::{TextureDesc, TextureObject, create_texture};
use super::{Kind, Registration};
use crate::error::{Result, UsageError};
use crate::graphics::{MappedArray, MappedMipmappedArray, RegisteredBuffer, RegisteredImage};
use crate::memory::DevicePtr;
use crate::result;
use crate::stream::AsStream;
use cuda_gl_sys as sys;
use std::marker::PhantomData;

/// One resource to map in a batch: a buffer or an image, borrowed mutably for the mapping.
#[derive(Debug)]
pub enum Resource<'a> {
    /// A registered buffer.
    Buffer(&'a mut RegisteredBuffer),
    /// A registered image.
    Image(&'a mut RegisteredImage),
}

impl<'a> From<&'a mut RegisteredBuffer> for Resource<'a> {
    fn from(b: &'a mut RegisteredBuffer) -> Self {
        Resource::Buffer(b)
    }
}

impl<'a> From<&'a mut RegisteredImage> for Resource<'a> {
    fn from(i: &'a mut RegisteredImage) -> Self {
        Resource::Image(i)
    }
}

/// Maps every resource in `resources` on `stream` with one `cuGraphicsMapResources` call.
///
/// The returned batch unmaps them all with one `cuGraphicsUnmapResources` call on the same stream
/// when dropped. Each resource's view is reachable by its position: [`MappedBatch::buffer`],
/// [`MappedBatch::image_array`], [`MappedBatch::surface_at`], ... The arrays of a batch copy
/// on its stream like those of a single mapping ([`MappedArray::copy_to_host`], ...). The mutable borrows rule out passing one resource twice.
///
/// # Errors
/// [`UsageError::EmptyBatch`] for an empty list; [`UsageError::WrongCudaContext`] for a resource
/// or stream from another context;
/// the driver's error from `cuGraphicsMapResources` (then nothing is mapped).
#[doc(alias = "cuGraphicsMapResources")]
pub fn map_all<'a, S: AsStream>(
    resources: impl IntoIterator<Item = Resource<'a>>,
    stream: &'a S,
) -> Result<MappedBatch<'a>> {
    let regs: Vec<&'a mut Registration> = resources
        .into_iter()
        .map(|r| match r {
            Resource::Buffer(b) => b.registration(),
            Resource::Image(i) => i.registration(),
        })
        .collect();
    let Some(first) = regs.first() else {
        return Err(UsageError::EmptyBatch.into());
    };
    let ctx = first.ctx.clone();
    if regs.iter().any(|r| r.ctx.raw() != ctx.raw()) {
        return Err(UsageError::WrongCudaContext {
            what: "resource of the batch",
            owner: "the batch's first resource".into(),
        }
        .into());
    }
    let mut regs = regs;
    for r in regs.iter_mut() {
        r.prepare_map(stream)?;
    }
    let mut raws: Vec<sys::CUgraphicsResource> = regs.iter().map(|r| r.raw).collect();
    let s = stream.raw_stream();
    // SAFETY: all registered in the bound context and unmapped (recovered above); the stream is
    // live and in that context (checked by prepare_map).
    unsafe { Registration::map_raw(&mut raws, s) }?;
    for r in regs.iter_mut() {
        r.mapped = true;
        r.retired.mapped();
    }
    Ok(MappedBatch {
        regs,
        raws,
        stream: s,
        _stream: PhantomData,
        stream_object: stream.as_any(),
    })
}

/// Resources mapped together by [`map_all`]. Dropping it unmaps them all in one call, on the
/// stream they were mapped on.
#[derive(Debug)]
#[must_use = "dropping the batch unmaps every resource at once"]
pub struct MappedBatch<'a> {
    regs: Vec<&'a mut Registration>,
    raws: Vec<sys::CUgraphicsResource>,
    stream: sys::CUstream,
    _stream: PhantomData<&'a ()>,
    /// The stream object of the map, when it offers itself ([`AsStream::as_any`]): adapters
    /// find their library's stream there.
    stream_object: Option<&'a dyn std::any::Any>,
}

impl<'a> MappedBatch<'a> {
    /// How many resources are mapped.
    pub fn len(&self) -> usize {
        self.regs.len()
    }

    /// Whether the batch is empty (never: `map_all` rejects empty lists).
    pub fn is_empty(&self) -> bool {
        self.regs.is_empty()
    }

    /// The registration at `index`.
    ///
    /// # Errors
    /// [`UsageError::OutOfRange`] when `index` is out of range.
    pub(crate) fn get(&self, index: usize) -> Result<&Registration> {
        self.regs.get(index).map(|r| &**r).ok_or_else(|| {
            UsageError::OutOfRange {
                what: "resource of the batch",
                index,
                len: self.regs.len(),
            }
            .into()
        })
    }

    /// The device pointer and size of the buffer at `index`.
    ///
    /// # Errors
    /// [`UsageError::OutOfRange`] when `index` is out of range; [`UsageError::WrongResourceKind`]
    /// when it names an image; the driver's error from `cuGraphicsResourceGetMappedPointer`.
    #[doc(alias = "cuGraphicsResourceGetMappedPointer")]
    pub fn buffer(&self, index: usize) -> Result<(DevicePtr<'_>, usize)> {
        let reg = self.get(index)?;
        if reg.kind != Kind::Buffer {
            return Err(UsageError::WrongResourceKind {
                index,
                expected: "buffer",
                actual: "image",
            }
            .into());
        }
        reg.ctx.bind()?;
        // SAFETY: mapped for as long as the batch is borrowed.
        let (ptr, size) = unsafe { result::graphics::mapped_pointer(reg.raw) }?;
        Ok((DevicePtr::new(ptr), size))
    }

    /// The stream object it was mapped on, when its type offers itself
    /// ([`AsStream::as_any`]): an adapter for another library's streams finds its stream here.
    pub fn stream_any(&self) -> Option<&'a dyn std::any::Any> {
        self.stream_object
    }

    /// The stream it was mapped on.
    pub fn raw_stream(&self) -> sys::CUstream {
        self.stream
    }

    /// The CUDA array of the image at `index`, at array index `layer` and mip `level`.
    ///
    /// # Errors
    /// [`UsageError::OutOfRange`] when `index` is out of range; [`UsageError::WrongResourceKind`]
    /// when it names a buffer; [`Error::InvalidSubresource`](crate::Error::InvalidSubresource)
    /// for a layer or level the image lacks.
    #[doc(alias = "cuGraphicsSubResourceGetMappedArray")]
    pub fn image_array(&self, index: usize, layer: u32, level: u32) -> Result<MappedArray<'_>> {
        let reg = self.image(index)?;
        mapped_array(reg, self.stream, layer, level)
    }

    /// The mipmapped array of the image at `index`.
    ///
    /// # Errors
    /// As [`MappedBatch::image_array`].
    #[doc(alias = "cuGraphicsResourceGetMappedMipmappedArray")]
    pub fn image_mipmapped_array(&self, index: usize) -> Result<MappedMipmappedArray<'_>> {
        mapped_mipmapped_array(self.image(index)?, self.stream)
    }

    /// The cached surface object over array index 0, mip level 0 of the image at `index`: as
    /// [`MappedImage::surface`](crate::MappedImage::surface), in a batch.
    ///
    /// # Errors
    /// As [`MappedBatch::surface_at`].
    #[doc(alias = "cuSurfObjectCreate")]
    pub fn surface(&self, index: usize) -> Result<Surface<'_>> {
        self.surface_at(index, 0, 0)
    }

    /// The cached surface object over array index `layer` at mip `level` of the image at
    /// `index`: as [`MappedImage::surface_at`](crate::MappedImage::surface_at) (the same cache
    /// on the registration), in a batch.
    ///
    /// # Errors
    /// [`UsageError::OutOfRange`] when `index` is out of range; [`UsageError::WrongResourceKind`]
    /// when it names a buffer; otherwise as
    /// [`MappedImage::surface_at`](crate::MappedImage::surface_at).
    #[doc(alias = "cuSurfObjectCreate")]
    #[doc(alias = "cuGraphicsSubResourceGetMappedArray")]
    pub fn surface_at(&self, index: usize, layer: u32, level: u32) -> Result<Surface<'_>> {
        cached_surface(self.image(index)?, self.stream, layer, level)
    }

    /// The cached surfaces of layers `first_layer..first_layer + N` at mip `level` of the image
    /// at `index`: as [`MappedImage::layer_surfaces`](crate::MappedImage::layer_surfaces).
    ///
    /// # Errors
    /// As [`MappedBatch::surface_at`], for the first layer that fails.
    #[doc(alias = "cuSurfObjectCreate")]
    pub fn layer_surfaces<const N: usize>(
        &self,
        index: usize,
        first_layer: u32,
        level: u32,
    ) -> Result<[Surface<'_>; N]> {
        layer_surfaces(self.image(index)?, self.stream, first_layer, level)
    }

    /// Creates a surface object over `array`, an array of the image at `index`: as
    /// [`MappedImage::create_surface`](crate::MappedImage::create_surface).
    ///
    /// # Errors
    /// [`UsageError::OutOfRange`] when `index` is out of range; [`UsageError::WrongResourceKind`]
    /// when it names a buffer; [`UsageError::ArrayOfAnotherMapping`] when `array` is not that
    /// image's; the driver's error from `cuSurfObjectCreate`.
    #[doc(alias = "cuSurfObjectCreate")]
    pub fn create_surface<'m>(
        &'m self,
        index: usize,
        array: &MappedArray<'m>,
    ) -> Result<SurfaceObject<'m>> {
        create_surface(self.image(index)?, array)
    }

    /// Creates a texture object over `array`, an array of the image at `index`: as
    /// [`MappedImage::create_texture`](crate::MappedImage::create_texture).
    ///
    /// # Errors
    /// [`UsageError::OutOfRange`] when `index` is out of range; [`UsageError::WrongResourceKind`]
    /// when it names a buffer; [`UsageError::ArrayOfAnotherMapping`] when `array` is not that
    /// image's; the driver's error from `cuTexObjectCreate`.
    #[doc(alias = "cuTexObjectCreate")]
    pub fn create_texture<'m>(
        &'m self,
        index: usize,
        array: &MappedArray<'m>,
        desc: &TextureDesc,
    ) -> Result<TextureObject<'m>> {
        create_texture(self.image(index)?, array, desc)
    }

    fn image(&self, index: usize) -> Result<&Registration> {
        let reg = self.get(index)?;
        if reg.kind == Kind::Buffer {
            return Err(UsageError::WrongResourceKind {
                index,
                expected: "image",
                actual: "buffer",
            }
            .into());
        }
        Ok(reg)
    }

    fn finish(&mut self) -> Result<()> {
        let Some(first) = self.regs.first() else {
            return Ok(());
        };
        if !first.mapped {
            return Ok(());
        }
        for r in &self.regs {
            r.owner.check("cuGraphicsUnmapResources (not called)")?;
        }
        first.ctx.bind()?;
        // SAFETY: the stream is borrowed for the batch's lifetime, so live.
        unsafe {
            crate::queue::check_not_capturing(self.stream, "cuGraphicsUnmapResources (not called)")
        }?;
        // SAFETY: all mapped together on `self.stream`, which is borrowed for the batch's
        // lifetime; every view borrows the batch, so none is used after.
        unsafe { result::graphics::unmap(&mut self.raws, self.stream) }
            .map_err(super::unmap_error)?;
        for r in self.regs.iter_mut() {
            r.unmapped(self.stream);
        }
        Ok(())
    }

    /// Unmaps every resource now, with one call, and returns the driver's error.
    ///
    /// # Errors
    /// [`Error::NoGlContext`](crate::Error::NoGlContext) or
    /// [`Error::WrongGlContext`](crate::Error::WrongGlContext) when the GL context that
    /// registered a resource is not current (they stay mapped and are recovered later); the
    /// driver's error from `cuGraphicsUnmapResources`.
    #[doc(alias = "cuGraphicsUnmapResources")]
    pub fn unmap(mut self) -> Result<()> {
        let result = self.finish();
        // On failure the registrations stay marked mapped and their next map or unregister
        // recovers them, so Drop must not retry: with no registrations left, its `finish` has
        // nothing to do, and the batch's vectors are freed as it drops.
        self.regs.clear();
        result
    }
}

impl Drop for MappedBatch<'_> {
    fn drop(&mut self) {
        if let Err(e) = self.finish()
            && let Some(first) = self.regs.first()
        {
            first.ctx.record_drop_error("unmapping a batch", e);
        }
    }
}
