//! The wgpu target's interop mode on wgpu's GL backend, the GL route (feature `wgpu-gl`):
//! frames are drawn in place into a GL texture of cuda-gl's ([`GlFrameTexture`]) that CUDA
//! registered, mapped on the frame's stream when the kernel asks for the frame's surface and
//! unmapped at the present, which then submits wgpu's blit (or copy) of it into the texture the
//! application samples. Map and unmap order CUDA's work and GL's in the one GL context that
//! wgpu runs on (SAFETY G4 of the module docs): no semaphore, no CPU wait. A frame's pixels are
//! device memory of the mode's, copied into the mapped texture at the present. Needs a device
//! that [`check_gl_device`](super::check_gl_device) takes (one from
//! [`open_gl_device`](super::open_gl_device)), and its GL context current at every call.
//!
//! Why two textures, as in the Vulkan mode: the application holds (clones of) the texture it
//! samples and may use it at any time, also while CUDA holds the frame texture mapped; and it
//! may destroy it. The frame texture is never handed out: only this mode's present uses it,
//! after the unmap.

use super::blit::{Blit, BlitKind, BlitPair};
use super::gl_texture::GlFrameTexture;
use super::interop_mode::{blit_pair, present_command};
use super::place::WgpuPlace;
use super::scope::scoped;
use crate::context::{Context, drop_when_idle};
use crate::display::{Present, PresentFrame, map_failed};
use crate::error::Result;
use crate::graphics::{MappedImage, RegisteredImage, Surface};
use crate::memory::{DeviceBuffer, DevicePtr};
use crate::result;
use crate::stream::{AsStream, Event, wait_limit};
use crate::wait::InDrop;
use std::cell::{Cell, OnceCell};
use std::mem::ManuallyDrop;
use std::sync::Arc;

/// What a refused second map names.
const FRAME_TEXTURE: &str = "GL frame texture";

/// The GL route's state.
#[derive(Debug)]
pub(super) struct GlInterop {
    ctx: Arc<Context>,
    /// The present's blit of the frame texture into the place's texture (its bind group holds
    /// a view of the frame texture); `None`: the present copies.
    blit: Option<(Blit, BlitPair)>,
    frame: GlFrameTexture,
    /// A frame's pixels (tightly packed), copied into the frame texture at the present. Freed
    /// once the work that may use them is done (see `Drop`), leaked when it does not end
    /// within the [wait limit](crate::wait_limit) (10 s by default).
    pixels: ManuallyDrop<DeviceBuffer<u8>>,
    order: Order,
}

/// What the frames leave to order: CUDA's work on the pixels (a present's copy out of them, a
/// dropped frame's kernel into them), which later frames, on any stream, and the drop come
/// after; and the clear's copy (out of the pixels, into the frame texture), which the frames
/// until the first shown one and the drop come after. The frames' own work on the frame
/// texture needs none of this: each map waits for GL's commands before it (the last present's
/// blit), which wait for the unmap before them (SAFETY G4). The clear issues no GL command
/// after its unmap, so a map would not wait for it until a frame joined after it is shown.
#[derive(Debug, Default)]
struct Order {
    /// Recorded on cuda-gl's private stream after the last such work: each frame's stream
    /// joins the private stream first, and the drop waits for the mark (at most the wait limit).
    mark: Option<Event>,
    /// The clear's mark (`GlFrameTexture::take_cleared`), on the private stream before any
    /// `mark`: the drop waits for it when there is no `mark`.
    clear: Option<Event>,
    /// A frame whose stream joined the private stream after `clear` was shown: its blit, after
    /// its unmap, orders every later map after the clear, and the frames stop joining for it.
    clear_shown: bool,
    /// A frame was begun and has not ended (it was forgotten with `mem::forget`, or its present
    /// failed before its work was ordered): its kernel may still write the pixels, unordered, so
    /// the next frame and the drop wait for the whole context first (at most the wait limit: past
    /// that the frame is refused with `Error::Timeout`, and the drop leaks what the kernel may
    /// still use).
    open: bool,
}

impl GlInterop {
    /// Refuses `call` unless the frame texture's GL context (the device's) is current.
    ///
    /// # Errors
    /// [`Error::NoGlContext`](crate::Error::NoGlContext),
    /// [`Error::WrongGlContext`](crate::Error::WrongGlContext), or as `GlOwner::check`.
    pub(super) fn check_current(&self, call: &'static str) -> Result<()> {
        self.frame.check_current(call)
    }

    /// Keeps the present's blit (its pipeline, bind group and views) alive for good: dropped
    /// without the GL context current, wgpu would delete its GL program in another context.
    /// (The frame texture checks its context itself.)
    pub(super) fn leak_blit(&mut self) {
        std::mem::forget(self.blit.take());
    }
}

impl Present for GlInterop {
    type Texture = WgpuPlace;
    type Frame<'t, S: AsStream + 't> = GlFrame<'t, S>;

    /// The frame texture in the GL context current on this thread, registered and cleared by
    /// CUDA, the present's blit into the place's texture, and the pixels.
    ///
    /// # Errors
    /// What [`check_gl_device`](super::check_gl_device) refuses; as `GlFrameTexture::new`;
    /// the driver's errors allocating the pixels; as [`blit_pair`].
    fn new(ctx: &Arc<Context>, place: &WgpuPlace) -> Result<GlInterop> {
        super::check_gl_device(&place.device, ctx)?;
        let layout = place.layout;
        let pixels = DeviceBuffer::zeroed(ctx, layout.bytes())?;
        let mut frame = GlFrameTexture::new(
            ctx,
            &place.device,
            (layout.size(), place.format()),
            Some(&pixels),
            "cuda_gl::wgpu_interop::WgpuTarget (GL frame)",
        )?;
        let blit = blit_pair(place, frame.texture())?;
        // The clear's copy (out of the pixels, into the texture) is the first work the frames
        // come after: their streams join the private stream after its mark until one is shown.
        let clear = frame.take_cleared();
        Ok(GlInterop {
            ctx: ctx.clone(),
            blit,
            frame,
            pixels: ManuallyDrop::new(pixels),
            order: Order {
                clear,
                ..Order::default()
            },
        })
    }

    /// Begins a frame on `stream`: after a forgotten frame's work (the whole context is waited for,
    /// at most the wait limit), and after the work on the pixels that the last frames left
    /// (`stream` joins cuda-gl's private stream).
    ///
    /// # Errors
    /// [`Error::Timeout`](crate::Error::Timeout) when a forgotten frame's work (or any other of
    /// the context) runs past the wait limit; the driver's errors of the wait and the join.
    fn begin<'t, S: AsStream>(
        &'t mut self,
        place: &'t WgpuPlace,
        stream: &'t S,
    ) -> Result<GlFrame<'t, S>> {
        if self.order.open {
            log::warn!(
                "cuda-gl: a wgpu target's frame was forgotten; synchronizing the context before \
                 the next one"
            );
            self.ctx.synchronize_within(wait_limit())?;
            self.order.open = false;
        }
        if self.order.mark.is_some() || (self.order.clear.is_some() && !self.order.clear_shown) {
            // SAFETY: the stream is live while borrowed, of the target's context (the target
            // checked it); nothing is queued.
            unsafe {
                self.ctx
                    .run_now(stream.raw_stream(), "WgpuTarget::frame (not begun)", |_| {
                        Ok(())
                    })
            }?;
        }
        self.order.open = true;
        let (image, source) = self.frame.parts();
        Ok(GlFrame {
            mapped: OnceCell::new(),
            image: Cell::new(Some(image)),
            ctx: &self.ctx,
            stream,
            pixels: &self.pixels,
            pixels_used: Cell::new(false),
            order: &mut self.order,
            showing: Showing {
                place,
                blit: self.blit.as_ref(),
                source,
            },
            ended: false,
        })
    }
}

impl Drop for GlInterop {
    fn drop(&mut self) {
        let _in_drop = InDrop::enter();
        // The pixels may be read by a present's copy still queued, or written by a dropped
        // frame's kernel: both are before the mark. A forgotten frame's kernel is before
        // nothing: the whole context is waited for.
        let (idle, waited_with) = if self.order.open {
            let idle = self.ctx.synchronize_within(wait_limit());
            (idle, "cuCtxSynchronize")
        } else {
            // The mark, when there is one, was recorded after the clear's on the private stream.
            let mark = self.order.mark.as_ref().or(self.order.clear.as_ref());
            let idle = mark.map_or(Ok(()), |mark| mark.wait_for(wait_limit()));
            (idle, "cuEventQuery")
        };
        if idle.is_err() && self.frame.is_mapped() {
            // A forgotten frame's kernel may still write the texture: its unregister would
            // wait for the context again, with no limit.
            self.frame.keep_for_good();
        }
        // SAFETY: dropped once, here, and never used after.
        unsafe {
            drop_when_idle(
                &self.ctx,
                &mut self.pixels,
                idle,
                "a wgpu target's pixel buffer",
                waited_with,
            )
        };
        // The frame texture goes next (field order): unregistered, then let go.
    }
}

/// What a present submits: the blit (or copy) of the frame texture into the place's texture.
struct Showing<'t> {
    place: &'t WgpuPlace,
    blit: Option<&'t (Blit, BlitPair)>,
    source: &'t wgpu::Texture,
}

impl Showing<'_> {
    /// Submits the blit (or copy) of the frame texture into the place's texture, under error
    /// scopes: a texture the application destroyed is refused by wgpu 30 at the submit.
    ///
    /// # Errors
    /// [`WgpuError::Refused`](super::WgpuError::Refused) or
    /// [`WgpuError::OutOfMemory`](super::WgpuError::OutOfMemory).
    fn submit(&self) -> Result<()> {
        let command = present_command(self.place, self.blit, self.source)?;
        let call = "wgpu::Queue::submit (the present's blit or copy of a GL frame texture into \
                    the texture the application samples)";
        scoped(&self.place.device, call, || {
            self.place.queue.submit([command]);
        })?;
        if self
            .blit
            .is_some_and(|(blit, _)| blit.kind() == BlitKind::Compute)
        {
            barrier_after_image_stores();
        }
        Ok(())
    }
}

/// Makes the compute blit's image stores into the place's texture visible to every later GL
/// command (`glMemoryBarrier(GL_ALL_BARRIER_BITS)`), in the context current here: wgpu's, whose
/// GL commands of the blit wgpu-hal issued inside `Queue::submit` (SAFETY G4), and which the
/// frame's map and unmap just found current.
///
/// Why: image stores are ordered with later GL commands only by a barrier naming how those
/// read. wgpu-hal 30 (`gles/command.rs`, `transition_textures`) follows a storage write with
/// the bits of the next use only, and for a copy out of the texture (`COPY_SRC`: the target's
/// `read_pixels`, an application's `copy_texture_to_*`) it sets `GL_PIXEL_BUFFER_BARRIER_BIT`,
/// while its copies read the texture as a framebuffer attachment (`glReadPixels`,
/// `glCopyTexSubImage2D`), which the GL spec orders after image stores only with
/// `GL_FRAMEBUFFER_BARRIER_BIT`. (Sampling gets `GL_TEXTURE_FETCH_BARRIER_BIT` from wgpu-hal.)
/// A context without `glMemoryBarrier` (before OpenGL 4.2) has no compute blit.
pub(super) fn barrier_after_image_stores() {
    match crate::glapi::current_gl("glMemoryBarrier (after a wgpu target's compute blit)") {
        Ok((_, _, fns)) => {
            if let Some(memory_barrier) = fns.memory_barrier {
                // SAFETY: a GL context is current (just asked), the one wgpu's device runs on
                // (SAFETY G1); the call changes no state that wgpu-hal keeps.
                unsafe { memory_barrier(gl::ALL_BARRIER_BITS) };
            }
        }
        Err(e) => log::warn!("cuda-gl: no barrier after a wgpu target's blit: {e}"),
    }
}

/// A GL-route frame: the frame texture is mapped for CUDA when its surface is first asked for
/// (or at the present of a pixel frame), until the present, or the frame's drop.
pub(super) struct GlFrame<'t, S: AsStream> {
    // Field order is drop order: an unpresented frame's guard unmaps first.
    mapped: OnceCell<MappedImage<'t>>,
    /// Taken when the texture is mapped (once per frame).
    image: Cell<Option<&'t mut RegisteredImage>>,
    ctx: &'t Arc<Context>,
    stream: &'t S,
    pixels: &'t DeviceBuffer<u8>,
    /// The pixels were asked for: they are what the frame shows.
    pixels_used: Cell<bool>,
    order: &'t mut Order,
    showing: Showing<'t>,
    /// Presented (or its present tried): the drop has nothing to order.
    ended: bool,
}

impl<S: AsStream> GlFrame<'_, S> {
    /// The frame texture's mapping, made on the frame's stream at the first call.
    ///
    /// # Errors
    /// As [`RegisteredImage::map`]; after a failed map,
    /// [`DisplayError::FrameMapFailed`](crate::display::DisplayError::FrameMapFailed) (the
    /// frame cannot map it again: begin another).
    fn mapping(&self) -> Result<&MappedImage<'_>> {
        if self.mapped.get().is_none() {
            let image = self.image.take().ok_or_else(|| map_failed(FRAME_TEXTURE))?;
            let _ = self.mapped.set(image.map(self.stream)?);
        }
        self.mapped.get().ok_or_else(|| map_failed(FRAME_TEXTURE))
    }

    /// Records the mark on cuda-gl's private stream after the work queued on the frame's
    /// stream so far (a join): the next frame's stream and the mode's drop come after it.
    ///
    /// # Errors
    /// The driver's errors (a stream under capture refuses the join).
    fn mark(&mut self) -> Result<()> {
        let mark = Event::new(self.ctx, false)?;
        let raw = mark.raw();
        // SAFETY: the frame's stream is live while the frame borrows it, of the target's
        // context (checked); the event is live, of that context.
        unsafe {
            self.ctx.run_now(
                self.stream.raw_stream(),
                "cuEventRecord (a wgpu target's frame)",
                |p| Ok(result::stream::event_record(raw, p)?),
            )
        }?;
        self.order.mark = Some(mark);
        Ok(())
    }
}

impl<S: AsStream> PresentFrame for GlFrame<'_, S> {
    /// The frame texture's surface, mapping it on the frame's stream the first time.
    ///
    /// # Errors
    /// As [`RegisteredImage::map`] (no GL context, or another, current:
    /// [`Error::NoGlContext`](crate::Error::NoGlContext),
    /// [`Error::WrongGlContext`](crate::Error::WrongGlContext)) and [`MappedImage::surface`];
    /// after a failed map,
    /// [`DisplayError::FrameMapFailed`](crate::display::DisplayError::FrameMapFailed).
    fn surface(&self) -> Result<Surface<'_>> {
        self.mapping()?.surface()
    }

    fn pixels(&self) -> Result<DevicePtr<'_>> {
        self.pixels_used.set(true);
        Ok(self.pixels.device_ptr())
    }

    /// Copies the pixels into the frame texture when they were asked for (mapping it), unmaps
    /// it, and submits wgpu's blit (or copy) of it into the texture the application samples:
    /// GL runs that after the unmap, so after CUDA's work on the frame's stream. A frame that
    /// asked for neither surface nor pixels leaves that texture as it was.
    ///
    /// # Errors
    /// As [`surface`](PresentFrame::surface) for the map; the copy's and the unmap's errors
    /// (nothing is submitted then); as `Showing::submit`.
    fn present(self: Box<Self>) -> Result<()> {
        let mut frame = *self;
        frame.ended = true;
        if frame.pixels_used.get() {
            let mapped = frame.mapping()?;
            mapped.array(0, 0)?.copy_from_device(frame.pixels)?;
            frame.mark()?;
        }
        let drawn = frame.mapped.take();
        let shown = drawn.is_some();
        if let Some(mapped) = drawn {
            mapped.unmap()?;
        }
        // The frame's work is ordered: the unmap for the texture, the mark for the pixels
        // (or they were not asked for).
        frame.order.open = false;
        if shown {
            frame.showing.submit()?;
            // Its stream joined after the clear (`begin`), and GL's blit came after its unmap.
            frame.order.clear_shown = true;
        }
        Ok(())
    }
}

impl<S: AsStream> Drop for GlFrame<'_, S> {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        // Dropped unpresented. What was mapped is unmapped by its guard, after this, on the
        // frame's stream (GL's later commands come after the kernel). A kernel that writes the
        // pixels is ordered by a mark; without one (a capturing stream refuses the join) the
        // frame stays open, and the next frame and the drop wait for the whole context.
        if !self.pixels_used.get() {
            self.order.open = false;
            return;
        }
        match self.mark() {
            Ok(()) => self.order.open = false,
            Err(e) => log::warn!(
                "cuda-gl: a wgpu target's frame dropped unpresented could not be ordered ({e}); \
                 the next frame waits for the whole context"
            ),
        }
    }
}

impl<S: AsStream> std::fmt::Debug for GlFrame<'_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GlFrame")
            .field("mapped", &self.mapped)
            .field("pixels_used", &self.pixels_used)
            .finish_non_exhaustive()
    }
}
