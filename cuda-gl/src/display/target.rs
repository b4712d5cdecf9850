//! [`DisplayTarget`]: the texture and the mode that moves frames into it (a [`Screen`]), with
//! the [`Report`] of why that mode; and device memory shown on it in one call (copied into a
//! frame, or mapped through the target's colour map).

use super::mode::{Frame, Screen};
use super::show::{self, CheckedStream, Kernels, ShowTarget};
use crate::TextureName;
use crate::context::Context;
#[cfg(doc)]
use crate::error::Error;
use crate::error::Result;
#[cfg(doc)]
use crate::error::{DisplayError, UsageError};
use crate::glapi::GlOwner;
use crate::image::{Format, Layout};
use crate::mode_choice::Mode;
use crate::mode_choice::{Report, first_mode};
use crate::stream::AsStream;
use crate::wait::InDrop;
use std::marker::PhantomData;
use std::sync::Arc;

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
    screen: Screen,
    /// The colour map of one-channel images shown ([`set_color_map`](Self::set_color_map)).
    kernels: Kernels,
    _not_send: PhantomData<*const ()>,
}

impl DisplayTarget {
    /// A target of `layout`'s size and format (its frames' pixels are tightly packed, whatever
    /// its pitch) in the GL context current on this thread and CUDA context `ctx`, in `mode`,
    /// or with `None` in the first mode of [`Mode::AUTO_ORDER`] that works here; and the
    /// [`Report`] of what was chosen and why.
    ///
    /// # Errors
    /// [`DisplayError::TargetSize`] for a zero side or one over `GL_MAX_TEXTURE_SIZE`; the owner
    /// check's errors when no usable GL context is current; with a mode given, why that mode
    /// cannot work here (for interop, [`Error::NotNvidiaGl`] or [`Error::WrongDevice`], say);
    /// otherwise the staged mode's error (the driver's, from allocating its pinned memory).
    pub fn new(
        ctx: &Arc<Context>,
        layout: Layout,
        mode: Option<Mode>,
    ) -> Result<(DisplayTarget, Report)> {
        let (owner, fns) = GlOwner::current("DisplayTarget::new")?;
        let string = |name| fns.string(name).unwrap_or_default();
        let (gl_renderer, gl_vendor) = (string(gl::RENDERER), string(gl::VENDOR));
        let report = |mode, refused| Report {
            target: "display",
            mode,
            refused,
            api: "GL",
            renderer: gl_renderer,
            vendor: gl_vendor,
            cuda_device: ctx.device().label().to_string(),
        };
        let modes = match &mode {
            Some(mode) => std::slice::from_ref(mode),
            None => &Mode::AUTO_ORDER[..],
        };
        first_mode(
            modes,
            "display",
            |mode| DisplayTarget::build(ctx, owner, layout, mode),
            report,
        )
    }

    /// The target in `mode`, or that mode's error.
    fn build(
        ctx: &Arc<Context>,
        owner: GlOwner,
        layout: Layout,
        mode: Mode,
    ) -> Result<DisplayTarget> {
        Ok(DisplayTarget {
            ctx: ctx.clone(),
            screen: Screen::new(mode, ctx, owner, layout)?,
            kernels: Kernels::default(),
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
    /// own by its label (`glObjectLabel`, with a number drawn at random per process), so that
    /// its uploads fail with [`DisplayError::ObjectReplaced`] instead of writing into it,
    /// and its drop leaves it alone.
    pub fn texture(&self) -> TextureName {
        TextureName(self.screen.texture_name())
    }

    /// The GL context the target's objects are in.
    #[cfg_attr(not(feature = "egui"), allow(dead_code))]
    pub(crate) fn owner(&self) -> GlOwner {
        self.screen.owner()
    }

    /// Width and height in pixels.
    pub fn size(&self) -> (u32, u32) {
        self.screen.layout().size()
    }

    /// The pixel format.
    pub fn format(&self) -> Format {
        self.screen.layout().format()
    }

    /// The texture's pixels as stored, for tests and screenshots: [`format`](Self::format)'s
    /// bytes per pixel (one channel for `R8` and `R32F`: the grey or colour a draw shows comes
    /// later), rows tightly packed, row 0 first (the bottom row when drawn with GL's usual
    /// texture coordinates). Waits for the GL work that writes the texture, the presents'
    /// uploads included; the application's GL state is left as it was.
    ///
    /// A frame forgotten with `mem::forget` left the texture mapped for CUDA: that mapping is
    /// undone first.
    ///
    /// # Errors
    /// The owner check's errors; [`DisplayError::ObjectReplaced`];
    /// [`Error::MissingGlFunction`] before OpenGL 4.5 without `GL_ARB_robustness`; the
    /// driver's error undoing a leaked mapping.
    pub fn read_pixels(&mut self) -> Result<Vec<u8>> {
        self.screen.read()
    }

    /// Readies the texture for a GL read outside a frame (see `Screen::ready_for_gl`).
    #[cfg(feature = "egui")]
    pub(crate) fn ready_for_gl(&mut self) -> Result<()> {
        self.screen.ready_for_gl()
    }

    /// The mode frames reach the texture in.
    pub fn mode(&self) -> Mode {
        self.screen.mode()
    }

    /// Uploads the frames a stream-mode target has copied but not uploaded yet, waiting (at most
    /// the [wait limit](crate::wait_limit), 10 s by default) for their copies; nothing in interop
    /// and staged mode, where a present that returned `Ok` is complete (one that failed is not
    /// retried: its frame is lost, and the texture may hold part of it in staged mode).
    ///
    /// # Errors
    /// The owner check's errors; [`Error::Timeout`]; the driver's error of the copy; GL's of
    /// the upload; [`DisplayError::ObjectReplaced`] as [`Frame::present`].
    pub fn flush(&mut self) -> Result<()> {
        self.screen.flush()
    }

    show::show_methods! {
        frame:
        /// In interop mode what the frame asks for (the texture, or the pixel buffer) is mapped
        /// for CUDA from then until the present or the drop.
        ///
        /// # Errors
        /// [`UsageError::WrongCudaContext`] for a stream of another context; the errors of
        /// joining the last present's copy; interop: of undoing a mapping an earlier frame
        /// leaked (the owner check's errors when the target's GL context is not current, the
        /// driver's).
        resize:
        /// A new texture is made, given storage and registered (with its pixels and buffers),
        /// then the old one is unregistered and deleted, so nothing leaks and, on an error, the
        /// target keeps its old size and objects. A stream-mode target's pending frames are
        /// dropped. The texture's name changes.
        ///
        /// # Errors
        /// As [`new`](Self::new) in the target's mode; the driver's error from unregistering
        /// the old texture (the target has the new size then).
        show:
        /// **What is ordered after what.** The copy is queued on `stream` after the work queued
        /// on it before; the GL commands this thread issues in the target's GL context after
        /// `show` returns see the texture holding `src` (a stream-mode target
        /// [`flush`](Self::flush)es before `show` returns). In [`Mode::Staged`] and
        /// [`Mode::Stream`] the CPU waited for the copy and GL's upload is issued before `show`
        /// returns. In [`Mode::Interop`] the copy into the pixel buffer is only queued when
        /// `show` returns (the CPU does not wait for it): the buffer is unmapped on `stream`
        /// after it, and `cuGraphicsUnmapResources` orders the CUDA work queued on `stream`
        /// before it ahead of the graphics work issued after it, the upload from the buffer
        /// into the texture first, then the application's later GL commands. Work on other CUDA
        /// streams, and GL commands of other GL contexts (without their own synchronisation
        /// with this one), are not ordered by `show`.
        set_color_map:
        /// `None` shows them grey again (the texture's swizzle, 0 to 1 or 0 to 255).
        ///
        /// ```no_run
        /// use cuda_gl::display::{ColorMap, DisplayTarget, Format, Layout, Palette};
        /// use cuda_gl::{Context, DeviceBuffer, Device, Stream, StreamFlags};
        ///
        /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
        /// // A GL context is current; a 1000x700 field of temperatures, 250 K to 320 K.
        /// let ctx = Context::new(&Device::get(0)?)?;
        /// let stream = Stream::new(&ctx, StreamFlags::NonBlocking)?;
        /// let field = DeviceBuffer::from_slice(&ctx, &vec![273.0f32; 1000 * 700])?;
        /// let (mut target, _) =
        ///     DisplayTarget::new(&ctx, Layout::packed((1000, 700), Format::Rgba8)?, None)?;
        /// target.set_color_map(Some(ColorMap::new(Palette::Viridis, 250.0, 320.0)?))?;
        /// target.show(&field, Layout::packed((1000, 700), Format::R32F)?, &stream)?;
        /// // ... draw target.texture(); a legend: ColorMap::color_of(kelvin) ...
        /// # Ok(())
        /// # }
        /// ```
    }
}

impl ShowTarget for DisplayTarget {
    fn cuda(&self) -> &Arc<Context> {
        &self.ctx
    }

    /// [`resize`](DisplayTarget::resize) to `layout`'s format too (tightly packed).
    fn reconfigure(&mut self, layout: Layout) -> Result<()> {
        if layout == self.screen.layout() {
            return Ok(());
        }
        let mut next = DisplayTarget::build(&self.ctx, self.screen.owner(), layout, self.mode())?;
        // The colour map is the target's, whatever its size.
        next.kernels = std::mem::take(&mut self.kernels);
        let mut old = std::mem::replace(self, next);
        // Released here, for its error; its drop then releases nothing more.
        old.screen.release()
    }

    fn begin<'t, S: AsStream>(&'t mut self, stream: CheckedStream<'t, S>) -> Result<Frame<'t, S>> {
        self.screen.begin(stream.0)
    }

    fn flush(&mut self) -> Result<()> {
        DisplayTarget::flush(self)
    }

    fn kernels(&mut self) -> &mut Kernels {
        &mut self.kernels
    }
}

impl Drop for DisplayTarget {
    fn drop(&mut self) {
        let _in_drop = InDrop::enter();
        if let Err(e) = self.screen.release() {
            self.ctx
                .record_drop_error("unregistering a display target's texture", e);
        }
    }
}
