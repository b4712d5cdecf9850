//! The modes, and the one place that dispatches on them: [`Mode`] names them, [`Backend`] holds
//! one mode's state, and `dispatch!` is the one `match` that calls into it. A [`Screen`] is the
//! texture with its mode's state, and a [`Frame`] one frame of any target's mode (boxed: the
//! frame's calls go to the mode's [`PresentFrame`]). Adding a mode: its file (implementing
//! [`Present`]), a variant of `Mode` and `Backend`, its [`Variant`], and an arm in each of the
//! three `match`es here.

use super::interop::Interop;
use super::present::{Present, PresentFrame};
use super::staged::Staged;
use super::stream::Streamed;
use super::texture::{Object, Texture, check_size};
use crate::context::Context;
use crate::error::Result;
use crate::glapi::GlOwner;
use crate::graphics::Surface;
use crate::image::{DeviceImage, Format, Layout};
use crate::mode_choice::Mode;
use crate::stream::AsStream;
use std::marker::PhantomData;
use std::sync::Arc;

/// The state of a target's mode.
// One per target, made once per size: boxing the larger mode would save nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(super) enum Backend {
    Interop(Interop),
    Staged(Staged),
    Stream(Streamed),
}

/// Runs `$body` with `$m` bound to the mode's state in a [`Backend`]: the one `match` that
/// calls into the modes.
macro_rules! dispatch {
    ($value:expr, $m:ident => $body:expr) => {
        match $value {
            Backend::Interop($m) => $body,
            Backend::Staged($m) => $body,
            Backend::Stream($m) => $body,
        }
    };
}

/// What the dispatch knows of a mode's type: its [`Mode`].
trait Variant: Present<Texture = Texture> {
    const MODE: Mode;
}

impl Variant for Interop {
    const MODE: Mode = Mode::Interop;
}

impl Variant for Staged {
    const MODE: Mode = Mode::Staged;
}

impl Variant for Streamed {
    const MODE: Mode = Mode::Stream;
}

/// `P`'s mode.
fn mode_of<P: Variant>(_: &P) -> Mode {
    P::MODE
}

/// A frame of `state`, a `P`'s, as the public frame holds it.
fn begin<'t, P: Present, S: AsStream + 't>(
    state: &'t mut P,
    texture: &'t P::Texture,
    stream: &'t S,
) -> Result<Box<dyn PresentFrame + 't>> {
    Ok(Box::new(state.begin(texture, stream)?))
}

impl Backend {
    /// The state of `mode` for `texture`, in CUDA context `ctx`.
    ///
    /// # Errors
    /// As the mode's [`Present::new`].
    fn new(mode: Mode, ctx: &Arc<Context>, texture: &Texture) -> Result<Backend> {
        Ok(match mode {
            Mode::Interop => Backend::Interop(Interop::new(ctx, texture)?),
            Mode::Staged => Backend::Staged(Staged::new(ctx, texture)?),
            Mode::Stream => Backend::Stream(Streamed::new(ctx, texture)?),
        })
    }
}

/// A target's texture, and the state of the mode that moves frames into it.
#[derive(Debug)]
pub(super) struct Screen {
    // Field order is drop order: the mode's state (its registrations of the texture, and the
    // buffers whose drop waits for the copies out of its CUDA memory) before the texture.
    backend: Backend,
    texture: Texture,
}

impl Screen {
    /// A texture of `layout`'s size and format (tightly packed) in the GL context of `owner`
    /// (current) and `mode`'s state for it in CUDA context `ctx`.
    ///
    /// # Errors
    /// [`DisplayError::TargetSize`](crate::display::DisplayError::TargetSize) for a zero side or one over
    /// `GL_MAX_TEXTURE_SIZE`; the owner check's errors; the texture's; as the mode's
    /// [`Present::new`].
    pub(super) fn new(
        mode: Mode,
        ctx: &Arc<Context>,
        owner: GlOwner,
        layout: Layout,
    ) -> Result<Screen> {
        let fns = owner.check("DisplayTarget::new")?;
        check_size(fns, layout.width(), layout.height())?;
        let texture = Texture::create(owner, fns, layout.packed_as(layout.format())?, true)?;
        Ok(Screen {
            backend: Backend::new(mode, ctx, &texture)?,
            texture,
        })
    }

    /// The texture's GL context.
    pub(super) fn owner(&self) -> GlOwner {
        self.texture.owner()
    }

    /// The texture's GL name.
    pub(super) fn texture_name(&self) -> u32 {
        self.texture.name()
    }

    /// The texture's pixels as stored ([`Texture::read`]), after undoing what a forgotten
    /// frame left mapped.
    ///
    /// # Errors
    /// As [`Present::recover`] and [`Texture::read`].
    pub(super) fn read(&mut self) -> Result<Vec<u8>> {
        self.ready_for_gl()?;
        self.texture.read()
    }

    /// Readies the texture for GL outside a frame: what a forgotten frame left mapped for
    /// CUDA is undone, and the texture is found still the target's.
    ///
    /// # Errors
    /// As [`Present::recover`]; the owner check's errors;
    /// [`DisplayError::ObjectReplaced`](crate::display::DisplayError::ObjectReplaced).
    pub(super) fn ready_for_gl(&mut self) -> Result<()> {
        dispatch!(&mut self.backend, m => m.recover())?;
        let fns = self
            .texture
            .owner()
            .check("a display texture read by GL (not called)")?;
        self.texture
            .label()
            .check_own(fns, Object::Texture, self.texture.name())
    }

    /// The frames' size and format, tightly packed.
    pub(super) fn layout(&self) -> Layout {
        self.texture.layout()
    }

    /// The mode.
    pub(super) fn mode(&self) -> Mode {
        dispatch!(&self.backend, m => mode_of(m))
    }

    /// Begins a frame on `stream`, which the caller checked is of the target's context.
    ///
    /// # Errors
    /// As the mode's [`Present::begin`].
    pub(super) fn begin<'t, S: AsStream>(&'t mut self, stream: &'t S) -> Result<Frame<'t, S>> {
        let layout = self.texture.layout();
        let texture = &self.texture;
        let work = dispatch!(&mut self.backend, m => begin(m, texture, stream))?;
        Ok(Frame::new(work, layout))
    }

    /// As [`Present::flush`].
    pub(super) fn flush(&mut self) -> Result<()> {
        let texture = &self.texture;
        dispatch!(&mut self.backend, m => m.flush(texture))
    }

    /// Releases what CUDA holds of the texture (the mode's [`Present::release`]; again, it
    /// does nothing more). When that fails the driver may still hold the texture mapped: it is
    /// leaked, claimed for good, never deleted while CUDA may write it.
    ///
    /// # Errors
    /// The mode's.
    pub(super) fn release(&mut self) -> Result<()> {
        let released = dispatch!(&mut self.backend, m => m.release());
        if released.is_err() {
            self.texture.leak();
        }
        released
    }
}

/// One frame of a [`DisplayTarget`](super::DisplayTarget) (GL) or of a `WgpuTarget` (feature
/// `wgpu`, on any of its routes), on the stream it was begun on: a kernel draws it through its
/// [`surface`](Self::surface) or into its [`pixels`](Self::pixels), then
/// [`present`](Self::present) puts it on the texture.
///
/// The surface is the fast path: in [`Mode::Interop`](super::Mode::Interop) nothing is copied
/// on the host. On a GL target it is the texture's own, mapped for the frame; on a wgpu
/// target, an image of the target's own that CUDA writes in place (wgpu's Vulkan backend: a
/// Vulkan image CUDA imported; wgpu's GL backend, the GL route: a GL texture CUDA registered),
/// which the present blits into the texture the application samples on the GPU. The pixels are
/// plain device memory with a pitch: on a GL target in interop mode a pixel buffer mapped for
/// the frame and uploaded into the texture by GL at the present (a copy on the GPU); otherwise
/// the target's device memory, copied out at the present. A frame shows its pixels if they
/// were asked for, else its surface; a frame that asks for neither leaves the texture as it
/// was.
///
/// Only [`present`](Self::present) shows a frame. A frame dropped unpresented shows nothing and
/// reports nothing, and the texture keeps what it held. The next frame (on any stream) and the
/// target's drop are still ordered after the dropped frame's kernel: a join of cuda-gl's private
/// stream to the frame's, or on a GL target in interop mode the unmap of what the frame mapped, on
/// the frame's stream after its kernel (a texture mapped there for the frame's surface then holds
/// what the kernel wrote into it in place, as far as the kernel got: its contents are undefined
/// from the map on, `WRITE_DISCARD`). A drop that cannot be ordered waits at most the [wait
/// limit](crate::wait_limit) (10 s by default), then leaks the target's CUDA memory rather than
/// free it under a kernel.
#[must_use = "a frame shows nothing unless presented: draw it, then call `present()`"]
pub struct Frame<'t, S: AsStream> {
    /// The mode's frame.
    work: Box<dyn PresentFrame + 't>,
    /// The target's frames, tightly packed.
    layout: Layout,
    _stream: PhantomData<&'t S>,
}

impl<S: AsStream> std::fmt::Debug for Frame<'_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Frame")
            .field("layout", &self.layout)
            .finish_non_exhaustive()
    }
}

impl<'t, S: AsStream> Frame<'t, S> {
    /// A frame of a target's mode (its `work`) on a stream of type `S`, of `layout` (tightly
    /// packed).
    pub(crate) fn new(work: Box<dyn PresentFrame + 't>, layout: Layout) -> Self {
        Frame {
            work,
            layout,
            _stream: PhantomData,
        }
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
    /// [`Format::bytes_per_pixel`] and row `y`, row 0 being the texture's first row in memory:
    /// GL's first, wgpu's top), for a kernel queued on the frame's stream (or ordered before
    /// the present). On a GL target in interop mode it is the texture itself, mapped with its
    /// contents undefined (`WRITE_DISCARD`). Everywhere else (the copying modes, and a wgpu
    /// target in interop mode on either route: its own image, blitted into the texture at the
    /// present) it is an image that keeps what was last drawn through it, by dropped frames
    /// too (black at first). So a kernel writes every texel, and reads none it did not write in
    /// this frame.
    ///
    /// # Errors
    /// Where the surface is mapped for the frame (interop mode on a GL target, and on a wgpu
    /// target's GL route): the errors of mapping it (the owner check's errors when the
    /// target's GL context is not current,
    /// [`Error::StreamCapturing`](crate::Error::StreamCapturing) for a stream under capture,
    /// the driver's), and the driver's error from creating the surface object (made once per
    /// texture, then cached);
    /// [`DisplayError::FrameMapFailed`](crate::display::DisplayError::FrameMapFailed) when asked
    /// again after a failed map; on a GL target,
    /// [`DisplayError::ObjectReplaced`](crate::display::DisplayError::ObjectReplaced) before
    /// the map when the application deleted or relabelled the texture.
    pub fn surface(&self) -> Result<Surface<'_>> {
        self.work.surface()
    }

    /// The frame's pixels (the target's size and format, rows tightly packed), for a kernel
    /// queued on the frame's stream (or ordered before the present): on a GL target in interop
    /// mode the texture's pixel buffer, mapped for the frame (uploaded into the texture by GL at
    /// the present), its contents undefined (`WRITE_DISCARD`); everywhere else (the copying
    /// modes, every wgpu target) the target's device memory, which keeps the last frame written
    /// there. So a kernel writes every pixel, and reads none it did not write in this frame.
    /// Asking for them makes them what the frame shows, instead of the surface (see the type's
    /// docs).
    ///
    /// # Errors
    /// On a GL target in interop mode: the errors of mapping the pixel buffer
    /// ([`Error::StreamCapturing`](crate::Error::StreamCapturing) for a stream under capture,
    /// the owner check's errors, the driver's);
    /// [`DisplayError::ObjectReplaced`](crate::display::DisplayError::ObjectReplaced) before
    /// the map when the application deleted or relabelled the pixel buffer;
    /// [`UsageError::SizeMismatch`](crate::UsageError::SizeMismatch) when it was given other
    /// storage; [`DisplayError::FrameMapFailed`](crate::display::DisplayError::FrameMapFailed) when asked
    /// again after a failed map.
    pub fn pixels(&self) -> Result<DeviceImage<'_>> {
        let ptr = self.work.pixels()?;
        Ok(DeviceImage::new(ptr, self.layout))
    }

    /// Puts the frame on the texture, in the order of the frame's stream.
    ///
    /// On a GL target: at once in [`Mode::Interop`](super::Mode::Interop) (what was mapped is
    /// unmapped on the stream, and drawn pixels are uploaded from the pixel buffer by GL); in
    /// [`Mode::Staged`](super::Mode::Staged), this frame is copied out band by band, GL taking
    /// each band once its copy has finished (the present waits on the CPU for this frame's
    /// kernel and copies; the texture holds the frame when it returns); in
    /// [`Mode::Stream`](super::Mode::Stream), copied into the next slot, and the finished slots
    /// uploaded (the texture lags until [`flush`](super::DisplayTarget::flush)). In interop and
    /// staged mode the GL commands issued in the target's GL context after the present returns
    /// see the frame on the texture. In interop mode the CPU has not waited for the frame's
    /// kernel: the unmap on the frame's stream orders the CUDA work queued on it before ahead
    /// of the graphics work issued after it (`cuGraphicsUnmapResources`' own guarantee), the
    /// upload from the pixel buffer and the application's draws among it.
    ///
    /// On a wgpu target the application's next `Queue::submit` on the target's queue sees the
    /// frame in the texture. In interop mode the present submits the blit into the texture with
    /// no CPU wait: on wgpu's Vulkan backend it waits on the GPU for CUDA's semaphore signal,
    /// queued after the frame's work; on its GL backend (the GL route) it runs after the unmap
    /// of the frame's texture on the frame's stream. In staged mode the present waits on the
    /// CPU for the frame's kernel and copies, and hands the frame to `Queue::write_texture`.
    ///
    /// # Errors
    /// GL target, interop: the errors of the unmaps and of the upload. Staged: of the copy out and
    /// the upload (the owner check's errors when the target's GL context is not current;
    /// [`Error::Timeout`](crate::Error::Timeout) when the copies, or GL's last upload, took past
    /// the wait limit; after an error the texture holds nothing new or part of the frame). Stream:
    /// as [`FrameStream::push_burst`](crate::external::FrameStream::push_burst). Where GL uploads
    /// the frame (every mode but an interop frame drawn through its surface),
    /// [`DisplayError::ObjectReplaced`](crate::display::DisplayError::ObjectReplaced) when the
    /// application deleted or relabelled the target's texture or pixel buffer (see
    /// [`DisplayTarget::texture`](super::DisplayTarget::texture)); nothing is uploaded then. wgpu
    /// target: the hand-off's errors (interop on Vulkan: as `CudaWrite::finish`; on the GL route:
    /// the map's, the copy's and the unmap's, nothing submitted then); staged:
    /// [`Error::Timeout`](crate::Error::Timeout) after the wait limit; both: `WgpuError::Refused`
    /// when wgpu refuses the submit or the write (the application destroyed the texture).
    pub fn present(self) -> Result<()> {
        self.work.present()
    }
}
