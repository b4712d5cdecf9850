//! An interop frame: the registered texture, mapped when the frame's surface is first asked for,
//! and the registered pixel buffer, mapped when its pixels are: a frame maps only what its
//! kernel writes. At the present both are unmapped on the frame's stream, and a pixel frame is
//! then uploaded from the buffer into the texture by GL (a copy on the GPU, in GL's order after
//! the unmap).

use super::gl_side::{GlSide, Object};
use crate::error::{Error, Result, UsageError};
use crate::graphics::{MappedBuffer, MappedImage, RegisteredBuffer, RegisteredImage, Surface};
use crate::memory::DevicePtr;
use crate::stream::AsStream;
use std::cell::{Cell, OnceCell};

/// The registrations of an interop target, and what a frame mapped of them.
pub(super) struct InteropFrame<'t> {
    /// Taken when the texture is mapped (once per frame).
    image: Cell<Option<&'t mut RegisteredImage>>,
    mapped_image: OnceCell<MappedImage<'t>>,
    /// Taken when the pixel buffer is mapped (once per frame).
    pbo: Cell<Option<&'t mut RegisteredBuffer>>,
    mapped_pbo: OnceCell<MappedBuffer<'t>>,
}

impl<'t> InteropFrame<'t> {
    pub(super) fn new(image: &'t mut RegisteredImage, pbo: &'t mut RegisteredBuffer) -> Self {
        InteropFrame {
            image: Cell::new(Some(image)),
            mapped_image: OnceCell::new(),
            pbo: Cell::new(Some(pbo)),
            mapped_pbo: OnceCell::new(),
        }
    }

    /// The texture's surface, mapping the texture on `stream` the first time, once `gl` finds
    /// it still the target's.
    ///
    /// # Errors
    /// [`UsageError::DisplayObjectReplaced`] when it is not; as [`RegisteredImage::map`] and
    /// [`MappedImage::surface`]; after a failed map, [`UsageError::FrameMapFailed`] (the frame
    /// cannot map it again: begin another).
    pub(super) fn surface<S: AsStream>(&self, gl: &GlSide, stream: &'t S) -> Result<Surface<'_>> {
        if self.mapped_image.get().is_none() {
            check_own(gl, Object::Texture, gl.texture)?;
            let image = self.image.take().ok_or_else(|| map_failed("texture"))?;
            let _ = self.mapped_image.set(image.map(stream)?);
        }
        self.mapped_image
            .get()
            .ok_or_else(|| map_failed("texture"))?
            .surface()
    }

    /// The pixel buffer's device address, mapping the buffer on `stream` the first time, once
    /// `gl` finds it still the target's; it must hold a frame.
    ///
    /// # Errors
    /// [`UsageError::DisplayObjectReplaced`] when it is not; as [`RegisteredBuffer::map`];
    /// [`UsageError::SizeMismatch`] for a buffer smaller than a frame; after a failed map,
    /// [`UsageError::FrameMapFailed`].
    pub(super) fn pixels<S: AsStream>(&self, gl: &GlSide, stream: &'t S) -> Result<DevicePtr<'_>> {
        let bytes = gl.frame_bytes();
        if self.mapped_pbo.get().is_none() {
            check_own(gl, Object::Buffer, gl.pbo)?;
            let pbo = self.pbo.take().ok_or_else(|| map_failed("pixel buffer"))?;
            let _ = self.mapped_pbo.set(pbo.map(stream)?);
        }
        let mapped = self
            .mapped_pbo
            .get()
            .ok_or_else(|| map_failed("pixel buffer"))?;
        // The application may have given the buffer other storage (glBufferData on a name of
        // its share group): a kernel writes a whole frame into it.
        if mapped.size() < bytes {
            return Err(UsageError::SizeMismatch {
                what: "the display target's pixel buffer (given other storage by a GL call?)",
                expected: bytes,
                given: mapped.size(),
            }
            .into());
        }
        Ok(mapped.device_ptr())
    }

    /// Unmaps what the frame mapped, and uploads the pixel buffer into the texture when the
    /// frame was drawn into it (its pixels win over its surface).
    ///
    /// # Errors
    /// The unmaps' errors (the first one; the other guard still unmaps in its drop); GL's
    /// error of the upload.
    pub(super) fn present(&mut self, gl: &GlSide) -> Result<()> {
        let pbo = self.mapped_pbo.take();
        let drawn_into_pbo = pbo.is_some();
        let pbo_unmapped = pbo.map_or(Ok(()), MappedBuffer::unmap);
        let image_unmapped = self.mapped_image.take().map_or(Ok(()), MappedImage::unmap);
        pbo_unmapped?;
        image_unmapped?;
        if drawn_into_pbo {
            // The unmap orders CUDA's writes before GL's later commands: this upload.
            gl.upload_from_buffer(gl.pbo)?;
        }
        Ok(())
    }
}

impl std::fmt::Debug for InteropFrame<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InteropFrame")
            .field("mapped_image", &self.mapped_image)
            .field("mapped_pbo", &self.mapped_pbo)
            .finish_non_exhaustive()
    }
}

impl InteropFrame<'_> {
    /// Unmaps what the frame mapped (in the guards' drop, which records their errors), with no
    /// upload.
    pub(super) fn abandon(&mut self) {
        drop(self.mapped_pbo.take());
        drop(self.mapped_image.take());
    }
}

/// Whether `name` is still `gl`'s object, asked before CUDA maps its registration: a name the
/// application deleted may name its own object now, which the driver may resolve the name to.
///
/// # Errors
/// The owner check's errors; [`UsageError::DisplayObjectReplaced`].
fn check_own(gl: &GlSide, object: Object, name: u32) -> Result<()> {
    let fns = gl.owner.check("cuGraphicsMapResources (not called)")?;
    gl.check_own(fns, object, name)
}

/// A frame asked again for what it failed to map.
fn map_failed(what: &'static str) -> Error {
    UsageError::FrameMapFailed { what }.into()
}
