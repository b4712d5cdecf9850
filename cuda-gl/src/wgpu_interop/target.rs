//! [`WgpuTarget`]: a `wgpu::Texture` that CUDA writes every frame, through the fastest mode that
//! works with the application's wgpu device, with the same frames, `show`, colour maps and
//! [`Report`] as the GL [`DisplayTarget`](crate::display::DisplayTarget).

#[cfg(feature = "wgpu-gl")]
use super::gl_mode::GlInterop;
use super::interop_mode::Interop;
use super::place::{WgpuPlace, check_size, mode_unavailable};
use super::read_back::{Readable, read_texture};
use super::staged_mode::Staged;
use crate::context::Context;
use crate::display::{
    CheckedStream, Format, Frame, Kernels, Layout, Mode, Present, PresentFrame, Report, ShowTarget,
    show,
};
use crate::error::Result;
use crate::mode_choice::first_mode as display_first_mode;
use crate::stream::AsStream;
use std::sync::Arc;

/// The modes a wgpu target has, fastest first: what `auto` tries.
const MODES: [Mode; 2] = [Mode::Interop, Mode::Staged];

/// The state of a wgpu target's mode.
// One per target, made once per size: boxing the larger mode would save nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum Backend {
    Interop(Interop),
    /// Interop by the GL route (wgpu's GL backend).
    #[cfg(feature = "wgpu-gl")]
    GlInterop(GlInterop),
    Staged {
        state: Staged,
        /// On a device of wgpu's GL backend over the program's GL context: that context, which
        /// the target's calls and its drop check (`None` elsewhere, and for a context without
        /// object labels, which cannot be told apart). Looked up before the target's place is
        /// made ([`WgpuTarget::new`]), kept by [`with_staged_gl`](Backend::with_staged_gl).
        #[cfg(feature = "wgpu-gl")]
        gl: Option<crate::glapi::GlOwner>,
    },
}

/// Runs `$body` with `$m` bound to the mode's state: the one `match` that calls into the modes.
macro_rules! dispatch {
    ($value:expr, $m:ident => $body:expr) => {
        match $value {
            Backend::Interop($m) => $body,
            #[cfg(feature = "wgpu-gl")]
            Backend::GlInterop($m) => $body,
            Backend::Staged { state: $m, .. } => $body,
        }
    };
}

impl Backend {
    /// The state of `mode` for `place`, in CUDA context `ctx`: interop by the GL route on
    /// wgpu's GL backend (feature `wgpu-gl`), by Vulkan's otherwise; staged mode with no GL
    /// context of the program's (see [`with_staged_gl`](Self::with_staged_gl)).
    fn new(mode: Mode, ctx: &Arc<Context>, place: &WgpuPlace) -> Result<Backend> {
        Ok(match mode {
            #[cfg(feature = "wgpu-gl")]
            Mode::Interop if super::gl_device::is_gl(&place.device) => {
                Backend::GlInterop(GlInterop::new(ctx, place)?)
            }
            Mode::Interop => Backend::Interop(Interop::new(ctx, place)?),
            Mode::Staged => Backend::Staged {
                state: Staged::new(ctx, place)?,
                #[cfg(feature = "wgpu-gl")]
                gl: None,
            },
            other => return Err(mode_unavailable("WgpuTarget::new", other)),
        })
    }

    /// This backend, in staged mode over the program's GL context `owner` (kept for the
    /// target's checks); other modes as they are.
    #[cfg(feature = "wgpu-gl")]
    fn with_staged_gl(mut self, owner: Option<crate::glapi::GlOwner>) -> Backend {
        if let Backend::Staged { gl, .. } = &mut self {
            *gl = owner;
        }
        self
    }

    /// The program's GL context of a staged backend over it (see
    /// [`with_staged_gl`](Self::with_staged_gl)); `None` in other modes.
    #[cfg(feature = "wgpu-gl")]
    fn staged_gl(&self) -> Option<crate::glapi::GlOwner> {
        match self {
            Backend::Staged { gl, .. } => *gl,
            _ => None,
        }
    }
}

/// Refuses `device` for interop mode with CUDA context `ctx`, by its route's check: the GL
/// route's on wgpu's GL backend (feature `wgpu-gl`), Vulkan's otherwise.
///
/// # Errors
/// As `check_gl_device` or [`check_device`](super::check_device).
fn check_interop(device: &wgpu::Device, ctx: &Arc<Context>) -> Result<()> {
    #[cfg(feature = "wgpu-gl")]
    if super::gl_device::is_gl(device) {
        return super::check_gl_device(device, ctx);
    }
    super::check_device(device, ctx)
}

/// A `wgpu::Texture` that CUDA writes every frame and the application samples in its own wgpu
/// passes (feature `wgpu`): the GL [`DisplayTarget`](crate::display::DisplayTarget)'s
/// frames, [`show`](Self::show), colour maps and [`Report`], on the application's wgpu device.
///
/// - [`Mode::Interop`]: frames are drawn into a Vulkan image that CUDA imported (a
///   [`SharedTexture`](super::SharedTexture) of the target's own, never handed out), handed
///   between wgpu and CUDA by a timeline semaphore on the GPU: a frame drawn through its
///   surface is written in place, its pixels are copied into the image on the GPU, and the
///   present submits a shader blit of the image into the texture (a wgpu compute pass, a
///   render pass for `R8Unorm`: every texel as it is, no filtering or conversion). No host
///   copy, no CPU wait.
///   Needs wgpu's Vulkan backend on the CUDA GPU with external memory and semaphores: a
///   device from [`open_device`](super::open_device). The present's wait for CUDA is queued
///   on the application's wgpu queue: see the
///   [module docs](super#a-cuda-fault-stalls-wgpus-queue) for what a CUDA fault does to it.
///
///   With feature `wgpu-gl`, on a device of wgpu's GL backend ([the GL route](super#the-gl-route):
///   a device from `open_gl_device`), interop mode draws the frame in place into a GL texture
///   of the target's own that CUDA registered, mapped on the frame's stream when its surface
///   is asked for and unmapped at the present, which then submits the same blit into the
///   texture: ordered by the map and the unmap in the one GL context, no CPU wait. That
///   context must be current on the calling thread at every call of the target, its drop
///   included (`open_gl_adapter`'s `# Safety`); cuda-gl's own GL calls check it, and a map
///   without it is refused ([`Error::NoGlContext`](crate::Error::NoGlContext),
///   [`Error::WrongGlContext`](crate::Error::WrongGlContext)).
/// - [`Mode::Staged`]: any other wgpu device (another vendor's GPU, lavapipe, wgpu's GL
///   backend off the CUDA GPU): each frame is copied into pinned host memory in bands and
///   handed to `Queue::write_texture` band by band while the next bands are copied. The present
///   waits on the CPU for the frame's kernel and copies; wgpu writes the texture at its next
///   submit.
///
/// What is ordered after what: after [`Frame::present`] (or [`show`](Self::show)) returns,
/// the application's next `Queue::submit` on the target's queue sees the frame in the texture
/// (interop: the present submitted the blit, which waits on the GPU for CUDA's signal, queued
/// after the frame's work, or on the GL route for the unmap; staged: `write_texture`'s data is
/// written before that submit's commands). A frame dropped unpresented shows nothing new, in
/// both modes.
///
/// The texture is a plain wgpu texture that only wgpu commands write (the present's blit or
/// `write_texture`), ordered by wgpu with the application's own uses: sample and copy it at
/// any time, from any thread that holds a clone, which may submit on the target's queue
/// during a present too ([why](super#other-threads-on-the-queue)). Do not destroy it: every
/// present and `read_pixels` then fails with [`WgpuError::Refused`](super::WgpuError::Refused) until a
/// [`resize`](Self::resize) to another size makes a new one. The target's wgpu objects
/// keep clones of the device and queue; dropping the application's device or queue first
/// changes nothing.
///
/// `Send` and `Sync`, as [`WgpuVideoPlanes`](super::WgpuVideoPlanes) and wgpu's own objects
/// (a render thread, or an ECS resource, may own it): every CUDA call binds the target's
/// context first, and every call that writes takes `&mut self`
/// ([`read_pixels`](Self::read_pixels), `&self`, makes only wgpu calls and the GL context's
/// check). On the GL route, cuda-gl's own GL calls (the frame texture's map, unmap and
/// deletion) check that the target's GL context is current, and refuse or leak otherwise;
/// wgpu's GL calls go to whatever context is current (`open_gl_adapter`'s `# Safety`: make,
/// use and drop the target where that context is current; it may move to another thread with
/// the target). The drop checks it where it can: dropped elsewhere, a GL-route target in
/// interop mode (or in staged mode over the program's GL context, where it has object labels)
/// leaks its wgpu objects (texture, blit, its clones of the queue and device), logged, rather
/// than have wgpu delete them in another context.
#[derive(Debug)]
pub struct WgpuTarget {
    ctx: Arc<Context>,
    /// Before the place: the mode's objects (CUDA's import of its own image, in interop mode).
    backend: Backend,
    place: WgpuPlace,
    kernels: Kernels,
}

impl WgpuTarget {
    /// A target of `layout`'s size and format (its frames' pixels tightly packed) on wgpu's
    /// `device` and `queue`, for CUDA context `ctx`, in `mode`, or with `None` in the first mode
    /// of interop and staged that works here (interop: Vulkan's on wgpu's Vulkan backend, the
    /// GL route's on its GL backend, feature `wgpu-gl`); and the [`Report`] of what was chosen
    /// and why.
    ///
    /// # Errors
    /// [`DisplayError::TargetSize`](crate::display::DisplayError::TargetSize) for a zero side or one over the device's
    /// `max_texture_dimension_2d`; [`DisplayError::ModeUnavailable`](crate::display::DisplayError::ModeUnavailable) for [`Mode::Stream`];
    /// with a mode given, why that mode cannot work here (for interop, a
    /// [`WgpuError`](super::WgpuError) that says what the device lacks); otherwise the staged
    /// mode's error (the driver's, from allocating its memory; on a device of wgpu's GL backend
    /// over the program's GL context, [`Error::NoGlContext`](crate::Error::NoGlContext) when no
    /// GL context is current, before wgpu makes anything).
    pub fn new(
        ctx: &Arc<Context>,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        layout: Layout,
        mode: Option<Mode>,
    ) -> Result<(WgpuTarget, Report)> {
        // Bad sizes are refused once, before any mode is tried (not as each mode's refusal).
        check_size(device, layout)?;
        // A place per mode tried: the texture's usage depends on the mode. Interop's device is
        // checked first, so that a device it cannot use is refused for that reason, not for
        // the blit's usage of the texture.
        let ((backend, place), report) = first_mode((ctx, "display"), device, mode, |mode| {
            if mode == Mode::Interop {
                check_interop(device, ctx)?;
            }
            // Staged over the program's GL context: its context, checked before wgpu makes
            // the texture in whatever context is current.
            #[cfg(feature = "wgpu-gl")]
            let staged_gl = match mode {
                Mode::Staged => super::gl_device::program_gl_owner(device, STAGED_GL)?,
                _ => None,
            };
            let place = WgpuPlace::new(device, queue, layout, mode)?;
            let backend = Backend::new(mode, ctx, &place)?;
            #[cfg(feature = "wgpu-gl")]
            let backend = backend.with_staged_gl(staged_gl);
            Ok((backend, place))
        })?;
        let target = WgpuTarget {
            ctx: ctx.clone(),
            backend,
            place,
            kernels: Kernels::default(),
        };
        Ok((target, report))
    }

    /// The CUDA context the target's pixels are in.
    pub fn context(&self) -> &Arc<Context> {
        &self.ctx
    }

    /// The wgpu texture to sample or copy (usages `TEXTURE_BINDING`, `COPY_SRC`,
    /// `COPY_DST`, and in [`Mode::Interop`] the usage the present's shader blit writes it
    /// with: `STORAGE_BINDING`, or `RENDER_ATTACHMENT` for `R8Unorm`; one level; the format of
    /// the target's [`Format`]: `Rgba8Unorm`, `Rgba32Float`, `R8Unorm`, `R32Float`). A new
    /// texture after [`resize`](Self::resize) and after a [`show`](Self::show) of another size
    /// or format: take it again then (a bind group made with the old one still samples the old
    /// one). Only cuda-gl writes it: what the application draws or stores into it is
    /// overwritten by the next present.
    ///
    /// A thread that holds only a clone cannot see the change: the thread that owns the target
    /// sends it the new one. `wgpu::Texture`s compare by identity, so comparing with the last
    /// clone sent catches a `show` of another size as well as a `resize`:
    ///
    /// ```no_run
    /// # fn demo(
    /// #     target: &mut cuda_gl::wgpu_interop::WgpuTarget,
    /// #     stream: &cuda_gl::Stream,
    /// #     field: &cuda_gl::DeviceBuffer<f32>,
    /// #     layout: cuda_gl::display::Layout,
    /// # ) -> Result<(), Box<dyn std::error::Error>> {
    /// let (tx, rx) = std::sync::mpsc::channel::<wgpu::Texture>();
    /// let mut sent = target.texture().clone();
    /// tx.send(sent.clone())?;
    /// // The sampling thread: `while let Ok(texture) = rx.recv() { /* new bind group */ }`
    /// # drop(rx);
    /// for _frame in 0..600 {
    ///     target.show(field, layout, stream)?; // `layout` may change size from frame to frame
    ///     if target.texture() != &sent {
    ///         sent = target.texture().clone();
    ///         tx.send(sent.clone())?;
    ///     }
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn texture(&self) -> &wgpu::Texture {
        &self.place.texture
    }

    /// The wgpu device the texture is on (the application's, cloned).
    pub fn device(&self) -> &wgpu::Device {
        &self.place.device
    }

    /// Width and height in pixels.
    pub fn size(&self) -> (u32, u32) {
        self.place.layout.size()
    }

    /// The pixel format.
    pub fn format(&self) -> Format {
        self.place.layout.format()
    }

    /// The mode frames reach the texture in.
    pub fn mode(&self) -> Mode {
        match self.backend {
            Backend::Interop(_) => Mode::Interop,
            #[cfg(feature = "wgpu-gl")]
            Backend::GlInterop(_) => Mode::Interop,
            Backend::Staged { .. } => Mode::Staged,
        }
    }

    /// [`resize`](Self::resize) to `layout`'s format too (tightly packed).
    fn reconfigure(&mut self, layout: Layout) -> Result<()> {
        if layout == self.place.layout {
            return Ok(());
        }
        // Over the program's GL context (the GL route, or staged there) wgpu calls GL through
        // whatever context is current: refused here, with another context or none current,
        // before the new place's wgpu texture is made.
        #[cfg(feature = "wgpu-gl")]
        self.check_gl_current("WgpuTarget::resize (or a show of another size or format)")?;
        let mode = self.mode();
        let place = WgpuPlace::new(&self.place.device, &self.place.queue, layout, mode)?;
        // The new place takes the blits the target made (its backend looks its blit up
        // there); on an error they go back to the old place, which the target keeps.
        place.keep_blits(&self.place);
        let backend = Backend::new(mode, &self.ctx, &place).inspect_err(|_| {
            self.place.keep_blits(&place);
        })?;
        // A staged backend keeps the program's GL context it was made over.
        #[cfg(feature = "wgpu-gl")]
        let backend = backend.with_staged_gl(self.backend.staged_gl());
        self.backend = backend;
        self.place = place;
        Ok(())
    }

    show::show_methods! {
        frame:
        /// The frame's surface is an image of the target's own that keeps what was last drawn
        /// through it (interop: on wgpu's Vulkan backend a Vulkan image CUDA imported, on its
        /// GL backend a GL texture CUDA registered, mapped when the surface is first asked
        /// for; staged: a CUDA array), and its pixels the target's device memory; the present
        /// copies the one the frame used into the texture (see [`Frame`]).
        ///
        /// # Errors
        /// [`UsageError::WrongCudaContext`](crate::UsageError::WrongCudaContext) for a stream of
        /// another context; interop on Vulkan: as
        /// [`SharedTexture::write`](super::SharedTexture::write) (a leaked frame is recovered here
        /// by synchronizing the context, at most the [wait limit](crate::wait_limit), 10 s by
        /// default); on the GL route: [`Error::Timeout`](crate::Error::Timeout) when a forgotten
        /// frame's work runs past the wait limit, the driver's errors ordering the frame's stream
        /// (the GL context is checked when the frame texture is mapped: [`Frame::surface`]); staged
        /// over the program's GL context (on a context with object labels), refused when that
        /// context is not current ([`Error::NoGlContext`](crate::Error::NoGlContext),
        /// [`Error::WrongGlContext`](crate::Error::WrongGlContext)).
        resize:
        /// The new texture and CUDA's objects are made first, so on an error the target keeps
        /// its old ones; the old ones die once wgpu and CUDA are done with them. The texture
        /// changes: take [`texture`](Self::texture) again.
        ///
        /// **The largest size**: each side at most the device's `max_texture_dimension_2d`,
        /// the limit it was opened with (`DeviceDescriptor::required_limits`: wgpu's default
        /// is 8192; up to the adapter's, which on wgpu's GL backend is the context's
        /// `GL_MAX_TEXTURE_SIZE`). In interop mode on wgpu's Vulkan backend also the largest
        /// image of the format that the Vulkan driver can export, which may be smaller
        /// ([`WgpuError::ExportTooLarge`](super::WgpuError::ExportTooLarge)). A resize keeps
        /// the target's mode, also for a target made with mode `None`: it does not fall back
        /// to staged for a size interop cannot take, but is refused and keeps the old size;
        /// [`new`](Self::new) with `None` at that size runs staged.
        ///
        /// # Errors
        /// As [`new`](Self::new) in the target's mode; over the program's GL context (the GL
        /// route, and staged mode there on a context with object labels), refused before any
        /// wgpu call when that context is not current
        /// ([`Error::NoGlContext`](crate::Error::NoGlContext),
        /// [`Error::WrongGlContext`](crate::Error::WrongGlContext)).
        show:
        /// **What is ordered after what.** The copy is queued on `stream` after the work queued
        /// on it before, and the application's next submit on the target's queue sees the frame
        /// in the texture (see the [type's docs](Self) for each mode's order).
        set_color_map:
        /// Without a map, a one-channel target's texture is `R8Unorm` or `R32Float`: a shader
        /// reads the value in `.r` (wgpu has no swizzle to make it grey).
    }

    /// The texture's pixels as stored, for tests and screenshots: [`format`](Self::format)'s
    /// bytes per pixel, rows tightly packed, row 0 first. Submits a copy on the target's queue
    /// (after the frames presented so far) and waits for it, at most the wait limit.
    ///
    /// # Errors
    /// [`Error::Timeout`](crate::Error::Timeout) after the wait limit;
    /// [`WgpuError::Refused`](super::WgpuError::Refused) when wgpu refuses the copy or the map
    /// (a texture the application destroyed, a lost device);
    /// [`WgpuError::OutOfMemory`](super::WgpuError::OutOfMemory) for the read-back buffer; on
    /// wgpu's GL backend over the program's GL context (the GL route, and staged mode there
    /// on a context with object labels), refused before any wgpu call when that context is
    /// not current ([`Error::NoGlContext`](crate::Error::NoGlContext),
    /// [`Error::WrongGlContext`](crate::Error::WrongGlContext),
    /// [`Error::GlContextGone`](crate::Error::GlContextGone)).
    pub fn read_pixels(&self) -> Result<Vec<u8>> {
        // On wgpu's GL backend wgpu's copy, map and poll call GL through whatever context is
        // current: refused here, as the drop leaks, rather than run in another context.
        #[cfg(feature = "wgpu-gl")]
        self.check_gl_current("WgpuTarget::read_pixels")?;
        read_texture(&Readable::place(&self.place))
    }

    /// Whether the GL context that wgpu's calls for this target run in is current: the GL
    /// route's, or in staged mode the program's context the device runs on; `Ok` where there
    /// is none to check (a Vulkan device, wgpu's own GL context, a context without object
    /// labels).
    ///
    /// # Errors
    /// [`Error::NoGlContext`](crate::Error::NoGlContext),
    /// [`Error::WrongGlContext`](crate::Error::WrongGlContext), or as `GlOwner::check`, naming
    /// `call`.
    #[cfg(feature = "wgpu-gl")]
    fn check_gl_current(&self, call: &'static str) -> Result<()> {
        match &self.backend {
            Backend::GlInterop(gl) => gl.check_current(call),
            Backend::Staged {
                gl: Some(owner), ..
            } => owner.check(call).map(drop),
            _ => Ok(()),
        }
    }
}

/// What a staged target over the program's GL context names when it checks that context.
#[cfg(feature = "wgpu-gl")]
const STAGED_GL: &str = "cuda_gl::wgpu_interop::WgpuTarget::new (staged, wgpu's GL backend)";

/// On wgpu's GL backend over the program's GL context (the GL route, and staged mode there),
/// wgpu deletes the target's texture and blit pipeline, and its queue's drop (when the target
/// holds the last clone) retires work and deletes what it held, through whatever GL context is
/// current when they go: the target is `Send`, so its drop may run on a thread where another
/// context (whose objects of those names would go instead) or none is current. There they are
/// leaked rather than dropped, with an error logged, as the video planes' textures are. (The
/// frame texture of cuda-gl's checks its context itself.)
#[cfg(feature = "wgpu-gl")]
impl Drop for WgpuTarget {
    fn drop(&mut self) {
        if let Err(e) = self.check_gl_current("glDelete* (wgpu's, not called)") {
            log::error!(
                "cuda-gl: a wgpu target dropped without its GL context current: its texture, \
                 blit, queue and device are leaked, not deleted in another context: {e}"
            );
            if let Backend::GlInterop(gl) = &mut self.backend {
                gl.leak_blit();
            }
            self.place.leak();
        }
    }
}

impl ShowTarget for WgpuTarget {
    fn cuda(&self) -> &Arc<Context> {
        &self.ctx
    }

    fn reconfigure(&mut self, layout: Layout) -> Result<()> {
        WgpuTarget::reconfigure(self, layout)
    }

    fn begin<'t, S: AsStream>(&'t mut self, stream: CheckedStream<'t, S>) -> Result<Frame<'t, S>> {
        // A staged frame over the program's GL context presents by `write_texture`, which
        // calls GL through whatever context is current: refused here, before any work. (The
        // GL route checks its context when the frame texture is mapped.)
        #[cfg(feature = "wgpu-gl")]
        if self.backend.staged_gl().is_some() {
            self.check_gl_current("WgpuTarget::frame (staged, over the program's GL context)")?;
        }
        let (place, layout) = (&self.place, self.place.layout);
        let work = dispatch!(&mut self.backend, m => boxed(m.begin(place, stream.0)?));
        Ok(Frame::new(work, layout))
    }

    fn flush(&mut self) -> Result<()> {
        Ok(())
    }

    fn kernels(&mut self) -> &mut Kernels {
        &mut self.kernels
    }
}

/// The state that `make` makes in `mode`, or with `None` in the first of [`MODES`] that it
/// makes here, and the [`Report`] of the choice (the modes refused before it, and why; what runs
/// wgpu on `device` and CUDA in `ctx`): how the wgpu target and the wgpu video planes choose.
///
/// # Errors
/// With a mode given, `make`'s error; otherwise the last mode's, or the first
/// [`Error::Usage`] (bad input is refused in every mode alike).
pub(super) fn first_mode<B>(
    (ctx, target): (&Context, &'static str),
    device: &wgpu::Device,
    mode: Option<Mode>,
    make: impl FnMut(Mode) -> Result<B>,
) -> Result<(B, Report)> {
    let info = device.adapter_info();
    let report = |mode, refused| Report {
        target,
        mode,
        refused,
        api: api_of(info.backend),
        renderer: info.name.clone(),
        vendor: format!("{} {}", info.driver, info.driver_info)
            .trim()
            .to_owned(),
        cuda_device: ctx.device().label().to_string(),
    };
    let tried: &[Mode] = match &mode {
        Some(mode) => std::slice::from_ref(mode),
        None => &MODES,
    };
    display_first_mode(tried, "wgpu", make, report)
}

/// A mode's frame as the public frame holds it.
fn boxed<'t>(frame: impl PresentFrame + 't) -> Box<dyn PresentFrame + 't> {
    Box::new(frame)
}

/// The report's name of a wgpu backend.
fn api_of(backend: wgpu::Backend) -> &'static str {
    match backend {
        wgpu::Backend::Vulkan => "wgpu Vulkan",
        wgpu::Backend::Gl => "wgpu GL",
        wgpu::Backend::Metal => "wgpu Metal",
        wgpu::Backend::Dx12 => "wgpu DX12",
        _ => "wgpu",
    }
}

#[cfg(test)]
mod tests {
    use crate::error::{Error, UsageError};
    use crate::mode_choice::refused_in_every_mode;
    use crate::result::CudaError;
    use cuda_gl_sys::CUresult;

    /// Auto mode falls back from interop to staged for what the device lacks, never when no
    /// GL context is current: staged mode's wgpu calls on wgpu's GL backend would run without
    /// it (it did fall back).
    #[test]
    fn no_gl_context_ends_auto_modes_search() {
        let code = CUresult::CUDA_ERROR_INVALID_GRAPHICS_CONTEXT;
        let source = CudaError::new("cuda_gl::wgpu_interop::check_gl_device", code);
        assert!(refused_in_every_mode(&Error::NoGlContext { source }));
        assert!(refused_in_every_mode(
            &UsageError::PinnedBufferUntracked.into()
        ));
        let lacks = super::super::WgpuError::GlOwnContext { call: "test" }.into();
        assert!(!refused_in_every_mode(&lacks));
    }
}
