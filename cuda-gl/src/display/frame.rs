//! [`Frame`]: one frame of a display target, drawn by a kernel through a surface or into
//! pitched device memory, and presented.

use super::image::{DeviceImage, Format, Layout};
use super::mode::ModeFrame;
use crate::error::Result;
use crate::graphics::Surface;
use crate::stream::AsStream;

/// One frame of a [`DisplayTarget`](super::DisplayTarget), on the stream it was begun on: a
/// kernel draws it through its [`surface`](Self::surface) or into its
/// [`pixels`](Self::pixels), then [`present`](Self::present) puts it on the texture.
///
/// The surface is the fast path: in [`Mode::Interop`](super::Mode::Interop) it is the
/// texture's own, mapped for the frame, and nothing is copied. The pixels are plain device
/// memory with a pitch: in interop mode a pixel buffer mapped for the frame and uploaded into
/// the texture by GL at the present (a copy on the GPU), in the copying modes the target's
/// memory, copied out at the present. A frame shows its pixels if they were asked for, else its
/// surface; a frame that asks for neither leaves the texture as it was.
///
/// Only [`present`](Self::present) shows a frame. A frame dropped unpresented shows nothing
/// and reports nothing: in the copying modes ([`Mode::Staged`](super::Mode::Staged),
/// [`Mode::Stream`](super::Mode::Stream)) nothing is copied or uploaded, and the texture keeps
/// what it held; in interop mode what the frame mapped is unmapped (on the frame's stream, in
/// order after its kernel), nothing is uploaded from the pixel buffer, and a texture mapped
/// for the frame's surface holds what the kernel wrote into it in place, as far as the kernel
/// got (the texture's contents are undefined from the map on: `WRITE_DISCARD`).
#[derive(Debug)]
#[must_use = "a frame shows nothing unless presented: draw it, then call `present()`"]
pub struct Frame<'t, S: AsStream> {
    work: ModeFrame<'t, S>,
    /// The target's frames, tightly packed.
    layout: Layout,
}

impl<'t, S: AsStream> Frame<'t, S> {
    pub(super) fn new(work: ModeFrame<'t, S>, layout: Layout) -> Self {
        Frame { work, layout }
    }

    /// Width and height in pixels.
    pub fn size(&self) -> (u32, u32) {
        (self.layout.width(), self.layout.height())
    }

    /// The pixel format.
    pub fn format(&self) -> Format {
        self.layout.format()
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
    /// GL context is not current, [`Error::StreamCapturing`](crate::Error::StreamCapturing)
    /// for a stream under capture, the driver's), and the driver's error from creating the
    /// surface object (made once per texture, then cached);
    /// [`UsageError::DisplayObjectReplaced`](crate::UsageError::DisplayObjectReplaced) before
    /// the map when the application deleted or relabelled the texture;
    /// [`UsageError::FrameMapFailed`](crate::UsageError::FrameMapFailed) when asked again
    /// after a failed map.
    pub fn surface(&self) -> Result<Surface<'_>> {
        self.work.surface()
    }

    /// The frame's pixels (the target's size and format, rows tightly packed), for a kernel
    /// queued on the frame's stream (or ordered before the present): in interop mode the
    /// texture's pixel buffer, mapped for the frame (uploaded into the texture by GL at the
    /// present), its contents undefined (`WRITE_DISCARD`); in the copying modes the target's
    /// device memory, which keeps the last frame written there. So a kernel writes every pixel,
    /// and reads none it did not write in this frame. Asking for them makes them what the
    /// frame shows, instead of the surface (see the type's docs).
    ///
    /// # Errors
    /// Interop: the errors of mapping the pixel buffer
    /// ([`Error::StreamCapturing`](crate::Error::StreamCapturing) for a stream under capture,
    /// the owner check's errors, the driver's);
    /// [`UsageError::DisplayObjectReplaced`](crate::UsageError::DisplayObjectReplaced) before
    /// the map when the application deleted or relabelled the pixel buffer;
    /// [`UsageError::SizeMismatch`](crate::UsageError::SizeMismatch) when it was given other
    /// storage; [`UsageError::FrameMapFailed`](crate::UsageError::FrameMapFailed) when asked
    /// again after a failed map.
    pub fn pixels(&self) -> Result<DeviceImage<'_>> {
        Ok(DeviceImage::new(self.work.pixels()?, self.layout))
    }

    /// Puts the frame on the texture, in the order of the frame's stream: at once in
    /// [`Mode::Interop`](super::Mode::Interop) (what was mapped is unmapped on the stream, and
    /// drawn pixels are uploaded from the pixel buffer by GL); in
    /// [`Mode::Staged`](super::Mode::Staged), this frame is copied out band by band, GL taking
    /// each band once its copy has finished (the present waits on the CPU for this frame's
    /// kernel and copies; the texture holds the frame when it returns); in
    /// [`Mode::Stream`](super::Mode::Stream), copied into the next slot, and the finished slots
    /// uploaded.
    ///
    /// # Errors
    /// Interop: the errors of the unmaps and of the upload. Staged: of the copy out and the
    /// upload (the owner check's errors when the target's GL context is not current;
    /// [`Error::Timeout`](crate::Error::Timeout) when the copies, or GL's last upload, took
    /// over 10 s; after an error the texture holds nothing new or part of the frame). Stream:
    /// as [`FrameStream::push_burst`](crate::external::FrameStream::push_burst). Where GL
    /// uploads the frame (every mode but an interop frame drawn through its surface),
    /// [`UsageError::DisplayObjectReplaced`](crate::UsageError::DisplayObjectReplaced) when
    /// the application deleted or relabelled the target's texture or pixel buffer (see
    /// [`DisplayTarget::texture`](super::DisplayTarget::texture)); nothing is uploaded then.
    pub fn present(self) -> Result<()> {
        self.work.present()
    }
}
