//! [`DisplayTarget`]: the texture, the frame's pixels on the GPU, and the mode that moves them.

use super::array::FrameArray;
use super::colormap::Mapper;
use super::frame::{Frame, FrameOrder, Work};
use super::gl_side::{GlSide, PixelBuffer, check_size, staged_through_buffer};
use super::interop::InteropFrame;
use super::staged::Staged;
use super::streamed::Streamed;
use super::{Format, Mode, Report};
use crate::context::Context;
#[cfg(doc)]
use crate::error::UsageError;
use crate::error::{Error, Result};
use crate::glapi::GlOwner;
use crate::graphics::{RegisterFlags, RegisteredBuffer, RegisteredImage};
use crate::memory::DeviceBuffer;
use crate::result;
use crate::stream::{AsStream, check_same_context};
use std::marker::PhantomData;
use std::sync::Arc;

/// How frames reach the texture, with what that mode holds.
#[derive(Debug)]
enum Backend {
    /// The texture, registered with CUDA for surfaces, and the pixel buffer pixel frames are
    /// drawn into, registered too.
    Interop {
        image: RegisteredImage,
        pbo: RegisteredBuffer,
    },
    /// Pinned host buffers.
    Staged(Staged),
    /// A frame stream.
    Streamed(Streamed),
    /// Taken apart by [`DisplayTarget::teardown`], in its drop.
    TornDown,
}

/// A GL texture that CUDA writes every frame and GL draws, through the mode chosen by
/// [`DisplayTarget::new`] (see the [module docs](super)).
///
/// Made in the GL context current at [`new`](Self::new), which must be current for every call
/// and for the drop (which otherwise logs and leaks the GL objects, since deleting by name in
/// another context would delete that context's objects). Neither `Send` nor `Sync`: its GL
/// calls go to the context current on the calling thread.
#[derive(Debug)]
pub struct DisplayTarget {
    ctx: Arc<Context>,
    // Field order is drop order: the registration goes before the texture it registers, the
    // copying modes' buffers (whose drop waits for the copies out of the array) before the
    // array.
    backend: Backend,
    /// The CUDA array frames are drawn in through a surface, in the copying modes (`None` in
    /// interop mode, where the surface is the texture's).
    array: Option<FrameArray>,
    gl: GlSide,
    /// The copying modes' frame pixels, tightly packed: what a kernel writes (interop's are a
    /// pixel buffer of the GL side's).
    pixels: Option<DeviceBuffer<u8>>,
    /// What the frames left to order (see [`FrameOrder`]).
    order: FrameOrder,
    /// The colour map of one-channel images shown ([`set_color_map`](Self::set_color_map)).
    pub(super) color_map: Option<Mapper>,
    _not_send: PhantomData<*const ()>,
}

impl DisplayTarget {
    /// A target of `width` x `height` pixels of `format` in the GL context current on this
    /// thread and CUDA context `ctx`, in `mode`, or with `None` in the first mode of
    /// [`Mode::AUTO_ORDER`] that works here; and the [`Report`] of what was chosen and why.
    ///
    /// # Errors
    /// [`UsageError::TargetSize`] for a zero side or one over `GL_MAX_TEXTURE_SIZE`; the owner
    /// check's errors when no usable GL context is current; with a mode given, why that mode
    /// cannot work here (for interop, [`Error::NotNvidiaGl`] or [`Error::WrongDevice`], say);
    /// otherwise the staged mode's error (the driver's, from allocating its pinned memory).
    pub fn new(
        ctx: &Arc<Context>,
        width: u32,
        height: u32,
        format: Format,
        mode: Option<Mode>,
    ) -> Result<(DisplayTarget, Report)> {
        let (owner, fns) = GlOwner::current("DisplayTarget::new")?;
        let string = |name| fns.string(name).unwrap_or_default();
        let (gl_renderer, gl_vendor) = (string(gl::RENDERER), string(gl::VENDOR));
        let mut refused = Vec::new();
        let order = match mode {
            Some(mode) => vec![mode],
            None => Mode::AUTO_ORDER.to_vec(),
        };
        let auto = mode.is_none();
        for (i, &mode) in order.iter().enumerate() {
            match DisplayTarget::build(ctx, owner, width, height, format, mode) {
                Ok(target) => {
                    let report = Report {
                        mode,
                        refused,
                        gl_renderer,
                        gl_vendor,
                        cuda_device: ctx.device().label().to_string(),
                    };
                    return Ok((target, report));
                }
                // Bad input is refused in every mode alike: no point in trying the next.
                Err(e @ Error::Usage(_)) => return Err(e),
                Err(e) if i + 1 == order.len() => {
                    // The refusals would be lost with the report: said here.
                    for (refused, why) in refused.iter().filter(|_| auto) {
                        log::warn!("cuda-gl: display mode {refused} refused: {why}");
                    }
                    return Err(e);
                }
                Err(e) => refused.push((mode, e)),
            }
        }
        Err(Error::Internal {
            what: "no display mode was tried".into(),
        })
    }

    /// The target in `mode`, or that mode's error.
    fn build(
        ctx: &Arc<Context>,
        owner: GlOwner,
        width: u32,
        height: u32,
        format: Format,
        mode: Mode,
    ) -> Result<DisplayTarget> {
        let fns = owner.check("DisplayTarget::new")?;
        check_size(fns, width, height)?;
        let bytes = width as usize * height as usize * format.bytes_per_pixel();
        // Made first, so that on a later error nothing is dropped out of order (a texture
        // deleted before its registration).
        let pixels = match mode {
            Mode::Interop => None,
            Mode::Staged | Mode::Stream => Some(DeviceBuffer::zeroed(ctx, bytes)?),
        };
        let pbo = match mode {
            Mode::Interop => PixelBuffer::Registered,
            Mode::Staged if staged_through_buffer(fns) => PixelBuffer::Written,
            Mode::Staged | Mode::Stream => PixelBuffer::None,
        };
        let mut gl = GlSide::create(owner, fns, width, height, format, pbo)?;
        let backend = match mode {
            // Every frame overwrites the whole texture: CUDA need not keep GL's contents.
            Mode::Interop => Backend::Interop {
                image: RegisteredImage::register_own_texture(
                    ctx,
                    gl.texture,
                    RegisterFlags::SURFACE_LOAD_STORE | RegisterFlags::WRITE_DISCARD,
                )?,
                // GL reads it at the present (the upload); CUDA overwrites all of it.
                pbo: RegisteredBuffer::register_own_buffer(
                    ctx,
                    gl.pbo,
                    RegisterFlags::WRITE_DISCARD,
                )?,
            },
            Mode::Staged => Backend::Staged(Staged::new(ctx, &mut gl)?),
            Mode::Stream => Backend::Streamed(Streamed::new(ctx, &gl)?),
        };
        let array = match mode {
            Mode::Interop => None,
            Mode::Staged | Mode::Stream => Some(FrameArray::new(ctx, width, height, format)?),
        };
        Ok(DisplayTarget {
            ctx: ctx.clone(),
            backend,
            array,
            gl,
            pixels,
            order: FrameOrder::default(),
            color_map: None,
            _not_send: PhantomData,
        })
    }

    /// The CUDA context the target's pixels are in.
    pub fn context(&self) -> &Arc<Context> {
        &self.ctx
    }

    /// The GL texture (`GL_TEXTURE_2D`, one level, `GL_NEAREST`) to draw. Its name changes on
    /// [`resize`](Self::resize) and on a [`show`](Self::show) of another size or format.
    ///
    /// The texture is the target's: draw and sample it, but never delete it (nor give it to
    /// an owner type that deletes on drop), relabel it or give it other storage. GL would hand
    /// a deleted name to the application's next texture; the target tells that one from its
    /// own by its label (`glObjectLabel`), so that its uploads fail with
    /// [`UsageError::DisplayObjectReplaced`] instead
    /// of writing into it, and its drop leaves it alone.
    pub fn texture(&self) -> u32 {
        self.gl.texture
    }

    /// Width and height in pixels.
    pub fn size(&self) -> (u32, u32) {
        (self.gl.width, self.gl.height)
    }

    /// The pixel format.
    pub fn format(&self) -> Format {
        self.gl.format
    }

    /// The mode frames reach the texture in.
    pub fn mode(&self) -> Mode {
        match self.backend {
            Backend::Interop { .. } => Mode::Interop,
            Backend::Staged(_) => Mode::Staged,
            Backend::Streamed(_) => Mode::Stream,
            // Only while the target is dropped, when nothing can ask.
            Backend::TornDown => Mode::Interop,
        }
    }

    /// Begins a frame on `stream`: a kernel queued on it draws the frame through
    /// [`Frame::surface`] or into [`Frame::pixels`], and [`Frame::present`] puts it on the
    /// texture. In interop mode what the frame asks for (the texture, or the pixel buffer) is
    /// mapped for CUDA from then until the present.
    ///
    /// # Errors
    /// [`UsageError::WrongCudaContext`] for a stream of another context; the errors of joining
    /// the last present's copy; interop: of undoing a mapping an earlier frame leaked (the
    /// owner check's errors when the target's GL context is not current, the driver's).
    pub fn frame<'t, S: AsStream>(&'t mut self, stream: &'t S) -> Result<Frame<'t, S>> {
        check_same_context(&self.ctx, stream, "the display target")?;
        if self.order.copied {
            // A present's copy may still read the pixels or the array, ordered only before the
            // work of its own stream: this stream waits for it (cuda-gl's private stream runs
            // its work in order, so joining it now orders after that copy). Every time, not
            // only for another stream: a stream handle of a destroyed stream can come back.
            // SAFETY: the stream is live while borrowed, of this context (checked); nothing
            // is queued.
            unsafe {
                self.ctx.run_now(
                    stream.raw_stream(),
                    "DisplayTarget::frame (not begun)",
                    |_| Ok(()),
                )
            }?;
        }
        let DisplayTarget {
            ctx,
            backend,
            array,
            gl,
            pixels,
            order,
            ..
        } = self;
        let work = match backend {
            Backend::Interop { image, pbo } => {
                // A mapping leaked by an earlier frame (forgotten, or its present failed) is
                // undone first: this frame may map only the other object, and GL must not use a
                // texture that CUDA holds mapped.
                image.recover_leaked_mapping()?;
                pbo.recover_leaked_mapping()?;
                Work::Interop(InteropFrame::new(image, pbo))
            }
            Backend::Staged(staged) => Work::Staged(staged),
            Backend::Streamed(streamed) => Work::Streamed(streamed),
            Backend::TornDown => {
                return Err(Error::Internal {
                    what: "a display frame begun on a target being dropped".into(),
                });
            }
        };
        order.open = true;
        Ok(Frame::new(
            stream,
            ctx,
            gl,
            pixels.as_ref(),
            array.as_ref(),
            order,
            work,
        ))
    }

    /// Uploads the frames a stream-mode target has copied but not uploaded yet, waiting (at
    /// most 10 s) for their copies; nothing in interop and staged mode, where a present that
    /// returned `Ok` is complete (one that failed is not retried: its frame is lost, and the
    /// texture may hold part of it in staged mode).
    ///
    /// # Errors
    /// The owner check's errors; [`Error::Timeout`]; the driver's error of the copy; GL's of
    /// the upload; [`UsageError::DisplayObjectReplaced`] as
    /// [`Frame::present`](super::Frame::present).
    pub fn flush(&mut self) -> Result<()> {
        match &mut self.backend {
            Backend::Streamed(streamed) => streamed.flush(&self.gl),
            Backend::Interop { .. } | Backend::Staged(_) | Backend::TornDown => Ok(()),
        }
    }

    /// Re-creates the target at `width` x `height` (nothing when it has that size already), in
    /// the same mode and format: a new texture
    /// is made, given storage and registered (with its pixels and buffers), then the old one
    /// is unregistered and deleted, so nothing leaks and, on an error, the target keeps its old
    /// size and objects. A stream-mode target's pending frames are dropped. The texture's name
    /// changes.
    ///
    /// # Errors
    /// As [`new`](Self::new) in the target's mode; the driver's error from unregistering the
    /// old texture (the target has the new size then).
    pub fn resize(&mut self, width: u32, height: u32) -> Result<()> {
        self.reconfigure(width, height, self.gl.format)
    }

    pub(super) fn reconfigure(&mut self, width: u32, height: u32, format: Format) -> Result<()> {
        if (width, height, format) == (self.gl.width, self.gl.height, self.gl.format) {
            return Ok(());
        }
        let mut next =
            DisplayTarget::build(&self.ctx, self.gl.owner, width, height, format, self.mode())?;
        // The colour map is the target's, whatever its size.
        next.color_map = self.color_map.take();
        let mut old = std::mem::replace(self, next);
        let unregistered = old.teardown();
        drop(old);
        unregistered
    }

    /// Releases what CUDA holds of the texture: unregisters it (interop), or drops the copying
    /// modes' buffers (which wait for their copies). When the unregister fails, the driver may
    /// still hold the texture mapped: its GL objects are then leaked, claimed for good, never
    /// deleted while CUDA may write them. The rest (the array, the GL objects, the pixels) go
    /// with the fields, in that order.
    fn teardown(&mut self) -> Result<()> {
        if self.order.open && self.array.is_some() {
            // A frame was begun and not presented (forgotten, dropped in a panic, or its
            // present failed before its copy): its kernel may still write the array, which
            // neither cuSurfObjectDestroy nor cuArrayDestroy waits for. The whole context is
            // waited for; when that fails the array is leaked instead.
            let idle = self
                .ctx
                .bind()
                .and_then(|()| Ok(result::ctx::synchronize()?));
            if let Err(e) = idle {
                log::error!("cuda-gl: display target's CUDA array leaked: {e}");
                std::mem::forget(self.array.take());
            }
        }
        match std::mem::replace(&mut self.backend, Backend::TornDown) {
            Backend::Interop { image, pbo } => {
                let image = image.unregister();
                let pbo = pbo.unregister();
                if image.is_err() || pbo.is_err() {
                    self.gl.leak();
                }
                image.and(pbo)
            }
            _ => Ok(()),
        }
    }
}

impl Drop for DisplayTarget {
    fn drop(&mut self) {
        if let Err(e) = self.teardown() {
            self.ctx
                .record_drop_error("unregistering a display target's texture", e);
        }
    }
}
