//! The interop mode: the texture is registered with CUDA, and so is a pixel buffer of one
//! frame beside it. A frame maps only what its kernel writes: the texture when its surface is
//! first asked for (the kernel writes the texture in place: no copy), the pixel buffer when its
//! pixels are. At the present both are unmapped on the frame's stream, and a pixel frame is
//! then uploaded from the buffer into the texture by GL (a copy on the GPU, in GL's order after
//! the unmap). Needs GL on the CUDA GPU, NVIDIA's.

use super::gl_buffer::GlBuffers;
use super::present::{Present, PresentFrame};
use super::texture::{Object, Texture};
use crate::context::Context;
use crate::error::{DisplayError, Error, Result, UsageError};
use crate::graphics::{
    MappedBuffer, MappedImage, RegisterFlags, RegisteredBuffer, RegisteredImage, Surface,
};
use crate::memory::DevicePtr;
use crate::stream::AsStream;
use std::cell::{Cell, OnceCell};
use std::sync::Arc;

/// The registrations of the texture and of the pixel buffer, and the buffer.
#[derive(Debug)]
pub(super) struct Interop {
    // Field order is drop order: the registrations go before the buffer they register (and
    // before the texture, the target's, dropped after this).
    image: RegisteredImage,
    pbo: RegisteredBuffer,
    /// The pixel buffer of one frame that pixel frames are drawn into.
    buffer: GlBuffers,
}

impl Present for Interop {
    type Texture = Texture;

    type Frame<'t, S: AsStream + 't> = InteropFrame<'t, S>;

    /// # Errors
    /// [`Error::NotNvidiaGl`] or [`Error::WrongDevice`] (say) when CUDA cannot register the
    /// texture; the errors of making the pixel buffer.
    fn new(ctx: &Arc<Context>, texture: &Texture) -> Result<Interop> {
        // GL reads it at the present (the upload); CUDA overwrites all of it.
        let buffer = GlBuffers::new(
            texture,
            [texture.frame_bytes()],
            gl::STREAM_DRAW,
            "glBufferData (a display pixel buffer)",
        )?;
        // Every frame overwrites the whole texture: CUDA need not keep GL's contents.
        let image = RegisteredImage::register_own_texture(
            ctx,
            texture.name(),
            RegisterFlags::SURFACE_LOAD_STORE | RegisterFlags::WRITE_DISCARD,
        )?;
        let pbo = RegisteredBuffer::register_own_buffer(
            ctx,
            buffer.first(),
            RegisterFlags::WRITE_DISCARD,
        )?;
        Ok(Interop { image, pbo, buffer })
    }

    fn begin<'t, S: AsStream>(
        &'t mut self,
        texture: &'t Texture,
        stream: &'t S,
    ) -> Result<InteropFrame<'t, S>> {
        // A mapping leaked by an earlier frame (forgotten) is undone first: this frame may map
        // only the other object, and GL must not use a texture that CUDA holds mapped.
        self.recover()?;
        let pbo_name = self.buffer.first();
        Ok(InteropFrame {
            texture,
            stream,
            pbo_name,
            mapped_pbo: OnceCell::new(),
            mapped_image: OnceCell::new(),
            image: Cell::new(Some(&mut self.image)),
            pbo: Cell::new(Some(&mut self.pbo)),
        })
    }

    /// Unregisters the texture and the pixel buffer. When an unregister fails, the driver may
    /// still hold them mapped: the buffer is leaked here (claimed for good, never deleted
    /// while CUDA may write it), the texture by the target.
    fn recover(&mut self) -> Result<()> {
        self.image.recover_leaked_mapping()?;
        self.pbo.recover_leaked_mapping()
    }

    fn release(&mut self) -> Result<()> {
        let image = self.image.unregister_in_place();
        let pbo = self.pbo.unregister_in_place();
        if image.is_err() || pbo.is_err() {
            self.buffer.leak();
        }
        image.and(pbo)
    }
}

/// An interop frame: what it mapped of the registrations, each mapped when first asked for.
pub(super) struct InteropFrame<'t, S: AsStream> {
    texture: &'t Texture,
    stream: &'t S,
    pbo_name: u32,
    // Field order is drop order: an unpresented frame's guards unmap the pixel buffer, then the
    // texture.
    mapped_pbo: OnceCell<MappedBuffer<'t>>,
    mapped_image: OnceCell<MappedImage<'t>>,
    /// Taken when the texture is mapped (once per frame).
    image: Cell<Option<&'t mut RegisteredImage>>,
    /// Taken when the pixel buffer is mapped (once per frame).
    pbo: Cell<Option<&'t mut RegisteredBuffer>>,
}

impl<S: AsStream> PresentFrame for InteropFrame<'_, S> {
    /// The texture's surface, mapping the texture on the frame's stream the first time, once
    /// it is found still the target's.
    ///
    /// # Errors
    /// [`DisplayError::ObjectReplaced`] when it is not; as [`RegisteredImage::map`] and
    /// [`MappedImage::surface`]; after a failed map, [`DisplayError::FrameMapFailed`] (the frame
    /// cannot map it again: begin another).
    fn surface(&self) -> Result<Surface<'_>> {
        if self.mapped_image.get().is_none() {
            check_own(self.texture, Object::Texture, self.texture.name())?;
            let image = self.image.take().ok_or_else(|| map_failed("texture"))?;
            let _ = self.mapped_image.set(image.map(self.stream)?);
        }
        self.mapped_image
            .get()
            .ok_or_else(|| map_failed("texture"))?
            .surface()
    }

    /// The pixel buffer's device address, mapping the buffer on the frame's stream the first
    /// time, once it is found still the target's; it must hold a frame.
    ///
    /// # Errors
    /// [`DisplayError::ObjectReplaced`] when it is not; as [`RegisteredBuffer::map`];
    /// [`UsageError::SizeMismatch`] for a buffer smaller than a frame; after a failed map,
    /// [`DisplayError::FrameMapFailed`].
    fn pixels(&self) -> Result<DevicePtr<'_>> {
        let bytes = self.texture.frame_bytes();
        if self.mapped_pbo.get().is_none() {
            check_own(self.texture, Object::Buffer, self.pbo_name)?;
            let pbo = self.pbo.take().ok_or_else(|| map_failed("pixel buffer"))?;
            let _ = self.mapped_pbo.set(pbo.map(self.stream)?);
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
    fn present(mut self: Box<Self>) -> Result<()> {
        let pbo = self.mapped_pbo.take();
        let drawn_into_pbo = pbo.is_some();
        let pbo_unmapped = pbo.map_or(Ok(()), MappedBuffer::unmap);
        let image_unmapped = self.mapped_image.take().map_or(Ok(()), MappedImage::unmap);
        pbo_unmapped?;
        image_unmapped?;
        if drawn_into_pbo {
            // The unmap orders CUDA's writes before GL's later commands: this upload.
            self.texture.upload_from_buffer(self.pbo_name, true)?;
        }
        Ok(())
    }
}

impl<S: AsStream> std::fmt::Debug for InteropFrame<'_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InteropFrame")
            .field("mapped_image", &self.mapped_image)
            .field("mapped_pbo", &self.mapped_pbo)
            .finish_non_exhaustive()
    }
}

/// Whether `name` is still the target's object, asked before CUDA maps its registration: a
/// name the application deleted may name its own object now, which the driver may resolve the
/// name to.
///
/// # Errors
/// The owner check's errors; [`DisplayError::ObjectReplaced`].
fn check_own(texture: &Texture, object: Object, name: u32) -> Result<()> {
    let fns = texture
        .owner()
        .check("cuGraphicsMapResources (not called)")?;
    texture.label().check_own(fns, object, name)
}

/// A frame asked again for what it failed to map (`what`, e.g. `texture`): its map is taken
/// once per frame.
pub(crate) fn map_failed(what: &'static str) -> Error {
    DisplayError::FrameMapFailed { what }.into()
}
