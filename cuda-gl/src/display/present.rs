//! The interface of a display mode: how frames reach the texture. Each mode is one file that
//! implements [`Present`] for its state (which it owns whole: registrations, pixel buffers,
//! pinned memory, CUDA memory) and [`PresentFrame`] for its frame; `mode.rs` dispatches to
//! them. A new mode is one more such file and one more variant there.

use super::texture::Texture;
use crate::context::Context;
use crate::error::Result;
use crate::graphics::Surface;
use crate::memory::DevicePtr;
use crate::stream::AsStream;
use std::sync::Arc;

/// A display mode's state, made for one texture (of one size and format): a target of
/// another size makes new state.
pub(super) trait Present: Sized {
    /// A frame of the mode, begun on a stream of type `S`.
    type Frame<'t, S: AsStream + 't>: PresentFrame
    where
        Self: 't;

    /// The mode's state for `texture`, in CUDA context `ctx` and the GL context current (the
    /// texture's).
    ///
    /// # Errors
    /// Why the mode cannot work here, or the errors of making its objects.
    fn new(ctx: &Arc<Context>, texture: &Texture) -> Result<Self>;

    /// Begins a frame on `stream`, which the caller checked is of the target's context.
    ///
    /// # Errors
    /// The mode's errors of ordering the frame after the last one.
    fn begin<'t, S: AsStream>(
        &'t mut self,
        texture: &'t Texture,
        stream: &'t S,
    ) -> Result<Self::Frame<'t, S>>;

    /// Uploads what presents left pending: nothing, but in a mode whose presents lag.
    ///
    /// # Errors
    /// The uploads' errors.
    fn flush(&mut self, _texture: &Texture) -> Result<()> {
        Ok(())
    }

    /// Releases what CUDA holds of the texture (nothing, but where CUDA registered it),
    /// before the texture is deleted. Called again on a target released already, when it
    /// does nothing more.
    ///
    /// # Errors
    /// The driver's error: CUDA may still hold the texture, which the target then leaks.
    fn release(&mut self) -> Result<()> {
        Ok(())
    }
}

/// One frame of a mode. Dropped unpresented, it shows nothing: what it mapped is unmapped (by
/// the mappings' guards), and nothing is copied or uploaded.
pub(super) trait PresentFrame {
    /// The surface a kernel draws the frame through.
    ///
    /// # Errors
    /// The mode's errors of making it reachable (a map).
    fn surface(&self) -> Result<Surface<'_>>;

    /// The first pixel of the frame's pixels (the texture's size and format, rows tightly
    /// packed), which become what the frame shows.
    ///
    /// # Errors
    /// The mode's errors of making them reachable (a map).
    fn pixels(&self) -> Result<DevicePtr<'_>>;

    /// Puts the frame on the texture.
    ///
    /// # Errors
    /// The mode's errors of the copy, the unmap and the upload.
    fn present(self) -> Result<()>;
}
