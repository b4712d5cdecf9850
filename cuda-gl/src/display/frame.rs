//! [`Frame`]: one frame of a display target, drawn by a kernel through a surface or into
//! pitched device memory, and presented.

use super::Format;
use super::array::FrameArray;
use super::gl_side::GlSide;
use super::interop::InteropFrame;
use super::staged::{Source, Staged};
use super::streamed::Streamed;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::graphics::Surface;
use crate::memory::{DeviceBuffer, DevicePtr};
use crate::stream::AsStream;
use std::cell::Cell;
use std::sync::Arc;

/// The pixels of a frame: pitched device memory of the target's size and format, for a kernel
/// to write, borrowed from the [`Frame`].
#[derive(Debug, Clone, Copy)]
pub struct Pixels<'f> {
    /// The first pixel of row 0, which is the texture's row 0 (GL's first row: the bottom
    /// one when drawn with GL's usual texture coordinates; see the [module docs](super)).
    pub ptr: DevicePtr<'f>,
    /// The bytes from the start of one row to the next.
    pub pitch: usize,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Their format.
    pub format: Format,
}

/// What the target's frames leave to order, beyond the work the mode tracks itself.
#[derive(Debug, Default)]
pub(super) struct FrameOrder {
    /// A present queued a copy of the pixels or the array on cuda-gl's private stream: the
    /// next frame's stream joins that stream first, so that its kernel does not overwrite what
    /// the copy still reads.
    pub(super) copied: bool,
    /// A frame was begun and not presented: its kernel may still write the array with no copy
    /// after it that a drop waits for.
    pub(super) open: bool,
}

/// What a frame holds of its target's mode.
#[derive(Debug)]
pub(super) enum Work<'t> {
    /// The texture and the pixel buffer, each mapped when first asked for.
    Interop(InteropFrame<'t>),
    /// The staged buffers and array.
    Staged(&'t mut Staged),
    /// The frame stream.
    Streamed(&'t mut Streamed),
}

/// One frame of a [`DisplayTarget`](super::DisplayTarget), on the stream it was begun on: a
/// kernel draws it through its [`surface`](Self::surface) or into its
/// [`pixels`](Self::pixels), then [`present`](Self::present) puts it on the texture (dropping
/// it presents too, and records a failure in the context: see
/// [`Context::take_drop_errors`](crate::Context::take_drop_errors)).
///
/// The surface is the fast path: in [`Mode::Interop`](super::Mode::Interop) it is the
/// texture's own, mapped for the frame, and nothing is copied. The pixels are plain device
/// memory with a pitch: in interop mode a pixel buffer mapped for the frame and uploaded into
/// the texture by GL at the present (a copy on the GPU), in the copying modes the target's
/// memory, copied out at the present. A frame shows its pixels if they were asked for, else its
/// surface; a frame that asks for neither leaves the texture as it was.
#[derive(Debug)]
#[must_use = "a frame is presented when dropped: draw it first"]
pub struct Frame<'t, S: AsStream> {
    stream: &'t S,
    ctx: &'t Arc<Context>,
    gl: &'t GlSide,
    /// The copying modes' pixels (interop's are the pixel buffer).
    pixels: Option<&'t DeviceBuffer<u8>>,
    /// The array surface frames are drawn in (the copying modes).
    array: Option<&'t FrameArray>,
    /// What the target's frames leave to order.
    order: &'t mut FrameOrder,
    work: Work<'t>,
    pixels_used: Cell<bool>,
    presented: bool,
}

impl<'t, S: AsStream> Frame<'t, S> {
    pub(super) fn new(
        stream: &'t S,
        ctx: &'t Arc<Context>,
        gl: &'t GlSide,
        pixels: Option<&'t DeviceBuffer<u8>>,
        array: Option<&'t FrameArray>,
        order: &'t mut FrameOrder,
        work: Work<'t>,
    ) -> Self {
        Frame {
            stream,
            ctx,
            gl,
            pixels,
            array,
            order,
            work,
            pixels_used: Cell::new(false),
            presented: false,
        }
    }

    /// Width and height in pixels.
    pub fn size(&self) -> (u32, u32) {
        (self.gl.width, self.gl.height)
    }

    /// The pixel format.
    pub fn format(&self) -> Format {
        self.gl.format
    }

    /// The frame's surface (`cudaSurfaceObject_t`, `surf2Dwrite` at byte offset `x *`
    /// [`Format::bytes_per_pixel`] and row `y`, row 0 being GL's first), for a kernel queued on
    /// the frame's stream (or ordered before the present). In interop mode it is the texture
    /// itself, mapped with its contents undefined (`WRITE_DISCARD`); in the copying modes a
    /// CUDA array that keeps the last frame drawn through it (black at first). So a kernel
    /// writes every texel, and reads none it did not write in this frame.
    ///
    /// # Errors
    /// Interop: the errors of mapping the texture (the owner check's errors when the target's
    /// GL context is not current, [`Error::StreamCapturing`] for a stream under capture, the
    /// driver's), and the driver's error from creating the surface object (made once per
    /// texture, then cached);
    /// [`UsageError::DisplayObjectReplaced`](crate::UsageError::DisplayObjectReplaced) before
    /// the map when the application deleted or relabelled the texture.
    pub fn surface(&self) -> Result<Surface<'_>> {
        match (&self.work, self.array) {
            (Work::Interop(frame), _) => frame.surface(self.gl, self.stream),
            (_, Some(array)) => Ok(array.surface()),
            (_, None) => Err(no_array()),
        }
    }

    /// The frame's pixels, for a kernel queued on the frame's stream (or ordered before the
    /// present): in interop mode the texture's pixel buffer, mapped for the frame (uploaded
    /// into the texture by GL at the present), its contents undefined (`WRITE_DISCARD`); in the
    /// copying modes the target's device memory, which keeps the last frame written there. So
    /// a kernel writes every pixel, and reads none it did not write in this frame. Asking for
    /// them makes them what the frame shows, instead of the surface (see the type's docs).
    ///
    /// # Errors
    /// Interop: the errors of mapping the pixel buffer ([`Error::StreamCapturing`] for a
    /// stream under capture, the owner check's errors, the driver's);
    /// [`UsageError::DisplayObjectReplaced`](crate::UsageError::DisplayObjectReplaced) before
    /// the map when the application deleted or relabelled the pixel buffer.
    pub fn pixels(&self) -> Result<Pixels<'_>> {
        self.pixels_used.set(true);
        let ptr = match &self.work {
            Work::Interop(frame) => frame.pixels(self.gl, self.stream)?,
            _ => self.pixels.ok_or_else(no_array)?.device_ptr(),
        };
        Ok(Pixels {
            ptr,
            pitch: self.gl.width as usize * self.gl.format.bytes_per_pixel(),
            width: self.gl.width,
            height: self.gl.height,
            format: self.gl.format,
        })
    }

    /// Puts the frame on the texture, in the order of the frame's stream: at once in
    /// [`Mode::Interop`](super::Mode::Interop) (what was mapped is unmapped, and drawn pixels
    /// are uploaded from the pixel buffer by GL); in [`Mode::Staged`](super::Mode::Staged), this
    /// frame is copied out band by band, GL taking each band once its copy has finished (the
    /// present waits on the CPU for this frame's kernel and copies; the texture holds the frame
    /// when it returns); in
    /// [`Mode::Stream`](super::Mode::Stream), copied into the next slot, and the finished slots
    /// uploaded.
    ///
    /// # Errors
    /// Interop: the errors of the unmaps and of the upload. Staged: of the copy out and the
    /// upload (the owner check's errors when the target's GL context is not current;
    /// [`Error::Timeout`] when the copies, or GL's last upload, took over 10 s; after an error
    /// the texture holds nothing new or part of the frame). Stream: as
    /// [`FrameStream::push_burst`](crate::external::FrameStream::push_burst). Where GL uploads
    /// the frame (every mode but an interop frame drawn through its surface),
    /// [`UsageError::DisplayObjectReplaced`](crate::UsageError::DisplayObjectReplaced) when
    /// the application deleted or relabelled the target's texture or pixel buffer (see
    /// [`DisplayTarget::texture`](super::DisplayTarget::texture)); nothing is uploaded then.
    pub fn present(mut self) -> Result<()> {
        self.presented = true;
        self.finish()
    }

    fn finish(&mut self) -> Result<()> {
        let presented = match &mut self.work {
            Work::Interop(frame) => frame.present(self.gl),
            _ => {
                let source = self.source(self.pixels_used.get())?;
                // Set before the copy is tried: a copy that fails after queueing part of its
                // work is joined too.
                self.order.copied = true;
                self.present_copy(source)
            }
        };
        if presented.is_ok() {
            self.order.open = false;
        }
        presented
    }

    fn present_copy(&mut self, source: Source<'t>) -> Result<()> {
        match &mut self.work {
            Work::Staged(staged) => staged.present(self.gl, source, self.stream),
            Work::Streamed(streamed) => streamed.present(self.gl, source, self.stream),
            Work::Interop(_) => Err(no_array()),
        }
    }

    /// Ends the frame without presenting it: an interop frame's mappings are undone, with no
    /// upload (its pixels hold nothing meant for the screen).
    pub(super) fn abandon(mut self) {
        self.presented = true;
        if let Work::Interop(frame) = &mut self.work {
            frame.abandon();
        }
    }

    /// Where a copied frame's picture is: its pixels if they were asked for, else the array.
    fn source(&self, used_pixels: bool) -> Result<Source<'t>> {
        match (used_pixels, self.array) {
            (true, _) => Ok(Source::Pixels(self.pixels.ok_or_else(no_array)?)),
            (false, Some(array)) => Ok(Source::Array(array)),
            (false, None) => Err(no_array()),
        }
    }
}

/// A copying mode's target without its array: cannot happen (the target makes one with the
/// mode), kept as an error rather than a panic.
fn no_array() -> Error {
    Error::Internal {
        what: "a display target of a copying mode without its array".into(),
    }
}

impl<S: AsStream> Drop for Frame<'_, S> {
    fn drop(&mut self) {
        // Not while a panic unwinds: the frame may be half drawn, and the present would do
        // GPU and GL work on the way out (an interop mapping is still unmapped by its guard).
        if !self.presented
            && !std::thread::panicking()
            && let Err(e) = self.finish()
        {
            self.ctx.record_drop_error("presenting a display frame", e);
        }
    }
}
