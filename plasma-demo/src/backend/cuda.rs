//! The CUDA backend: the kernels of `kernels/plasma.cu` write the GL objects in place.
//!
//! - PBO path: the pixel buffer is registered `WRITE_DISCARD`; every frame maps it on the
//!   backend's stream, launches `plasma_pbo` on its device pointer, unmaps, and lets GL copy it
//!   into the texture with `glTexSubImage2D`.
//! - Surface path: the texture itself (immutable RGBA8 storage) is registered
//!   `SURFACE_LOAD_STORE | WRITE_DISCARD`; every frame maps it, launches `plasma_surface` on its
//!   surface object and unmaps. No pixel buffer, no copy.
//! - Stream path: nothing is registered; `plasma_pbo` writes frames into a
//!   `cuda_gl::external::FrameStream` in bursts, and GL copies each into the texture and draws
//!   it (see [`super::stream`]).
//!
//! The display paths (`--path auto`, `interop`, `staged`) register nothing of the demo's: they
//! run on [`super::display`].

use super::Frame;
use super::stream::StreamFrames;
use crate::cli::{PathChoice, Size};
use crate::renderer::{Renderer, Upload};
use crate::timing::{Clock, Profiler, Stage, TIMER_RING_DEPTH, micros, wait_for_gpu};
use crate::watchdog;
use anyhow::{Context as _, Result, bail};
use cuda_gl::external::ExternalGl;
use cuda_gl::{
    Context, Device, Event, Function, ImageTarget, LaunchConfig, Module, RegisterFlags,
    RegisteredBuffer, RegisteredImage, Stream, StreamFlags,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The plasma kernels, compiled by `cargo xtask ptx` for `sm_75` (PTX ISA 8.0, so CUDA 12.0
/// drivers load it and newer GPUs JIT it).
pub const PLASMA_PTX: &str = include_str!("../../kernels/plasma.ptx");

/// The GL object registered with CUDA.
#[derive(Debug)]
enum Registered {
    Buffer(RegisteredBuffer),
    Image(RegisteredImage),
    /// The stream path registers nothing: its frame stream takes the place.
    Stream(StreamFrames),
}

/// The CUDA backend of one path. Drop it before the GL objects it registered (the session does).
#[derive(Debug)]
pub struct CudaBackend {
    path: PathChoice,
    /// Dropped first: unregisters while the GL objects and the context are alive.
    resource: Option<Registered>,
    events: Option<EventRing>,
    pub(super) base: Base,
    /// For the stream path: the external-memory entry points, and frames per burst.
    external: Option<(ExternalGl, usize)>,
}

impl CudaBackend {
    /// Loads the kernels in `ctx` and creates the stream the frames run on. Register nothing
    /// yet: [`CudaBackend::attach`] does, once the GL objects exist.
    ///
    /// # Errors
    /// The cuda-gl error of creating the stream or loading the PTX (e.g.
    /// [`cuda_gl::Error::PtxTooNew`] with an old driver).
    pub fn new(ctx: Arc<Context>, path: PathChoice) -> Result<CudaBackend, cuda_gl::Error> {
        let kernel = match path {
            // The display paths run on `DisplayBackend`; `attach` refuses them here.
            PathChoice::Pbo
            | PathChoice::Stream
            | PathChoice::Auto
            | PathChoice::Interop
            | PathChoice::Staged => "plasma_pbo",
            PathChoice::Surface => "plasma_surface",
        };
        Ok(CudaBackend {
            path,
            resource: None,
            events: None,
            base: Base::new(ctx, kernel)?,
            external: None,
        })
    }

    /// Gives the stream path the external-memory entry points of the GL context (loaded by the
    /// caller) and its burst size; [`CudaBackend::attach`] needs them for `--path stream`.
    pub fn set_stream_gl(&mut self, gl: ExternalGl, burst: usize) {
        self.external = Some((gl, burst));
    }

    /// The stream path's mean and largest latency in frames, once it drew a frame.
    pub fn stream_latency(&self) -> Option<(f64, u64)> {
        match &self.resource {
            Some(Registered::Stream(s)) => s.latency_frames(),
            _ => None,
        }
    }

    /// The backend for the GL context current on this thread: CUDA's primary context on the
    /// first CUDA device behind it ([`Context::for_current_gl`]).
    ///
    /// # Errors
    /// [`cuda_gl::Error::Load`] without a driver, [`cuda_gl::Error::NotNvidiaGl`] when the GL
    /// context is not NVIDIA's, or as [`CudaBackend::new`].
    pub fn for_current_gl(path: PathChoice) -> Result<CudaBackend, cuda_gl::Error> {
        let ctx = Context::for_current_gl()?;
        CudaBackend::new(ctx, path)
    }

    /// The backend on CUDA device `device` (whose GL context the caller made current).
    ///
    /// # Errors
    /// As [`Device::get`], [`Context::new`] and [`CudaBackend::new`].
    pub fn on_device(device: &Device, path: PathChoice) -> Result<CudaBackend, cuda_gl::Error> {
        CudaBackend::new(Context::new(device)?, path)
    }

    /// The path.
    pub fn path(&self) -> PathChoice {
        self.path
    }

    /// Test hook of the [`watchdog`]: the next frame first launches a kernel that keeps the
    /// stream busy for `duration` (spinning on the GPU clock, writing nothing), once. Longer than
    /// the watchdog's limit, it makes the run stall as a hung GPU would, without harming the GPU.
    pub fn debug_spin(&mut self, duration: Duration) {
        self.base.pending_spin = Some(duration);
    }

    /// What the renderer must allocate for this path.
    pub fn upload(&self) -> Upload {
        match self.path {
            PathChoice::Pbo => Upload::PixelBuffer,
            PathChoice::Surface | PathChoice::Stream => Upload::InPlace,
            PathChoice::Auto | PathChoice::Interop | PathChoice::Staged => Upload::External,
        }
    }

    /// Registers the renderer's pixel buffer (PBO path) or texture (surface path) with CUDA.
    ///
    /// # Errors
    /// The cuda-gl error of the registration (e.g. [`cuda_gl::Error::NotNvidiaGl`]); a display
    /// path, which [`super::DisplayBackend`] runs.
    pub fn attach(&mut self, renderer: &Renderer) -> Result<()> {
        self.detach()?;
        let registered = match self.path {
            PathChoice::Auto | PathChoice::Interop | PathChoice::Staged => bail!(
                "--path {} runs on the display backend (backend::DisplayBackend), not the \
                 CUDA backend of the registered paths",
                self.path
            ),
            PathChoice::Pbo => {
                let Some(pbo) = renderer.pixel_buffer() else {
                    bail!("the renderer has no pixel buffer for the PBO path");
                };
                Registered::Buffer(
                    RegisteredBuffer::register(&self.base.ctx, pbo, RegisterFlags::WRITE_DISCARD)
                        .with_context(|| {
                        format!("registering the {} pixel buffer with CUDA", renderer.size())
                    })?,
                )
            }
            PathChoice::Stream => {
                let Some((gl, burst)) = &self.external else {
                    bail!(
                        "the stream path needs the GL context's external-memory entry points \
                         (set_stream_gl was not called)"
                    );
                };
                Registered::Stream(StreamFrames::new(
                    &self.base.ctx,
                    gl,
                    renderer.size(),
                    *burst,
                )?)
            }
            PathChoice::Surface => Registered::Image(
                RegisteredImage::register(
                    &self.base.ctx,
                    renderer.texture(),
                    ImageTarget::Texture2D,
                    RegisterFlags::SURFACE_LOAD_STORE | RegisterFlags::WRITE_DISCARD,
                )
                .with_context(|| {
                    format!("registering the {} texture with CUDA", renderer.size())
                })?,
            ),
        };
        self.resource = Some(registered);
        Ok(())
    }

    /// Unregisters the GL object (before the renderer deletes or replaces it).
    ///
    /// # Errors
    /// The driver's error from `cuGraphicsUnregisterResource`.
    pub fn detach(&mut self) -> Result<()> {
        match self.resource.take() {
            Some(Registered::Buffer(b)) => b.unregister().context("unregistering the PBO")?,
            Some(Registered::Image(i)) => i.unregister().context("unregistering the texture")?,
            Some(Registered::Stream(mut s)) => s.wait_idle()?,
            None => {}
        }
        Ok(())
    }

    /// Renders the frame at time `t` into the renderer's texture: map, kernel, unmap (and for
    /// the PBO path, `glTexSubImage2D` from the pixel buffer); `Ok(None)`: the caller draws it.
    /// The stream path instead pushes a burst of frames and draws every frame GL is given over
    /// `viewport` itself: `Ok(Some(n))` for `n` frames drawn.
    ///
    /// # Errors
    /// When not attached, or a cuda-gl error of mapping, launching or unmapping.
    pub fn render(&mut self, frame: Frame<'_>) -> Result<Option<u64>> {
        let Frame {
            renderer,
            t,
            viewport,
            profiler,
        } = frame;
        self.base.launch_pending_spin()?;
        if let Some(Registered::Stream(frames)) = self.resource.as_mut() {
            watchdog::enter(watchdog::Stage::Kernel);
            let drawn =
                frames.render(&self.base.kernel, &self.base.stream, renderer, t, viewport)?;
            return Ok(Some(drawn));
        }
        let size = renderer.size();
        if profiler.is_enabled() && self.events.is_none() {
            self.events = Some(EventRing::new(&self.base.ctx)?);
        }
        let events = if profiler.is_enabled() {
            self.events.as_mut()
        } else {
            None
        };
        let Some(resource) = self.resource.as_mut() else {
            bail!("the CUDA backend has no registered GL object (attach was not called)");
        };
        let (w, h) = dims(size)?;
        let config = LaunchConfig::for_image(size.width, size.height);
        let events: Option<&[Event; 4]> = match events {
            Some(ring) => Some(ring.begin_frame(profiler)?),
            None => None,
        };
        let mark = |i: usize| -> Result<()> {
            if let Some(slot) = events {
                slot[i].record(&self.base.stream)?;
            }
            Ok(())
        };
        match resource {
            Registered::Buffer(buffer) => {
                mark(0)?;
                watchdog::enter(watchdog::Stage::Map);
                let mapped = profiler.cpu(Stage::Map, || {
                    buffer.map(&self.base.stream).context("mapping the PBO")
                })?;
                if mapped.size() < size.rgba_bytes() {
                    bail!(
                        "the mapped PBO has {} bytes, a {size} frame needs {}",
                        mapped.size(),
                        size.rgba_bytes()
                    );
                }
                mark(1)?;
                watchdog::enter(watchdog::Stage::Kernel);
                // SAFETY: `plasma_pbo(uchar4* out, int w, int h, float t)` writes w * h uchar4
                // at `out`; the mapped buffer holds at least that many bytes (checked above) and
                // stays mapped until the unmap below, which is queued on the same stream after
                // the kernel. Nothing else touches the buffer while it is mapped.
                unsafe {
                    self.base.kernel.launch(
                        config,
                        &self.base.stream,
                        (mapped.device_ptr(), w, h, t),
                    )
                }
                .context("launching plasma_pbo")?;
                mark(2)?;
                watchdog::enter(watchdog::Stage::Unmap);
                profiler.cpu(Stage::Unmap, || mapped.unmap().context("unmapping the PBO"))?;
                mark(3)?;
                watchdog::enter(watchdog::Stage::Upload);
                profiler.gl_and_cpu(Stage::Upload, || renderer.upload_from_pixel_buffer())?;
            }
            Registered::Image(image) => {
                mark(0)?;
                watchdog::enter(watchdog::Stage::Map);
                let start = Instant::now();
                let mapped = image
                    .map(&self.base.stream)
                    .context("mapping the texture")?;
                let surface = mapped
                    .surface()
                    .context("getting the texture's surface object")?;
                profiler.record(Stage::Map, Clock::CpuWall, micros(start.elapsed()));
                mark(1)?;
                watchdog::enter(watchdog::Stage::Kernel);
                // SAFETY: `plasma_surface(cudaSurfaceObject_t s, int w, int h, float t)` writes
                // w x h RGBA8 texels through `s`, the surface of level 0 of the mapped texture,
                // which is exactly `size` (the renderer allocated it so); the texture stays
                // mapped until the unmap below, queued on the same stream after the kernel.
                unsafe {
                    self.base
                        .kernel
                        .launch(config, &self.base.stream, (surface, w, h, t))
                }
                .context("launching plasma_surface")?;
                mark(2)?;
                watchdog::enter(watchdog::Stage::Unmap);
                profiler.cpu(Stage::Unmap, || {
                    mapped.unmap().context("unmapping the texture")
                })?;
                mark(3)?;
            }
            Registered::Stream(_) => bail!("the stream path renders above"),
        }
        if let Some(ring) = self.events.as_mut().filter(|_| profiler.is_enabled()) {
            ring.end_frame();
        }
        Ok(None)
    }

    /// Waits for the stream, reads outstanding event timings, and reports any deferred error
    /// (a failed unmap or unregister in a `Drop`).
    ///
    /// # Errors
    /// The driver's error from synchronizing, or [`cuda_gl::Error::DeferredDrop`].
    pub fn finish(&mut self, profiler: &mut Profiler) -> Result<()> {
        watchdog::enter(watchdog::Stage::Finish);
        if let Some(Registered::Stream(frames)) = self.resource.as_mut() {
            frames.wait_idle()?;
        }
        self.base
            .stream
            .synchronize()
            .context("waiting for the CUDA stream")?;
        if let Some(ring) = self.events.as_mut() {
            ring.drain(profiler)?;
        }
        self.base
            .ctx
            .check_drop_errors()
            .context("an earlier CUDA unmap or unregister failed")?;
        Ok(())
    }
}

/// What both CUDA backends hold: the CUDA context, the frames' stream, the plasma module with
/// the backend's kernel and the watchdog's test kernel, and the GPU's name. Fields drop in this
/// order: the functions before their module, all of it before the stream and the context.
#[derive(Debug)]
pub(super) struct Base {
    pub(super) kernel: Function,
    /// `debug_spin(unsigned long long ns)`: the watchdog's test hook.
    spin: Function,
    /// How long the next frame's spin kernel runs, once ([`CudaBackend::debug_spin`]).
    pub(super) pending_spin: Option<Duration>,
    _module: Module,
    pub(super) stream: Stream,
    pub(super) ctx: Arc<Context>,
    pub(super) device_name: String,
}

impl Base {
    /// Creates the frames' stream in `ctx` and loads the plasma kernels: `kernel` and the
    /// watchdog's.
    ///
    /// # Errors
    /// The cuda-gl error of creating the stream or loading the PTX (e.g.
    /// [`cuda_gl::Error::PtxTooNew`] with an old driver).
    pub(super) fn new(ctx: Arc<Context>, kernel: &str) -> Result<Base, cuda_gl::Error> {
        let stream = Stream::new(&ctx, StreamFlags::NonBlocking)?;
        let module = Module::from_ptx(&ctx, PLASMA_PTX)?;
        let kernel = module.function(kernel)?;
        let spin = module.function("debug_spin")?;
        let device_name = ctx.device().name().unwrap_or_else(|_| "unknown GPU".into());
        Ok(Base {
            kernel,
            spin,
            pending_spin: None,
            _module: module,
            stream,
            ctx,
            device_name,
        })
    }

    /// The GPU, for descriptions: its name and CUDA device ordinal.
    pub(super) fn gpu(&self) -> String {
        format!(
            "{} (device {})",
            self.device_name,
            self.ctx.device().ordinal()
        )
    }

    /// Launches the watchdog's test kernel for the pending duration on the stream, once (then
    /// none is pending); nothing when none is pending.
    ///
    /// # Errors
    /// The launch's error.
    pub(super) fn launch_pending_spin(&mut self) -> Result<()> {
        if let Some(duration) = self.pending_spin.take() {
            watchdog::enter(watchdog::Stage::Kernel);
            let ns = u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX);
            let one = LaunchConfig {
                grid: (1, 1, 1),
                block: (1, 1, 1),
                shared_mem_bytes: 0,
            };
            // SAFETY: `debug_spin(unsigned long long ns)` takes one u64 and touches no memory.
            unsafe { self.spin.launch(one, &self.stream, (ns,)) }
                .context("launching debug_spin")?;
        }
        Ok(())
    }
}

/// The kernels' `int` width and height.
pub(super) fn dims(size: Size) -> Result<(i32, i32)> {
    Ok((
        i32::try_from(size.width).context("width too large")?,
        i32::try_from(size.height).context("height too large")?,
    ))
}

/// CUDA events recorded on the frame's stream before the map, after the map, after the kernel
/// and after the unmap; read [`TIMER_RING_DEPTH`] frames later so timing never stalls.
#[derive(Debug)]
struct EventRing {
    slots: Vec<[Event; 4]>,
    recorded: Vec<bool>,
    current: usize,
    started: bool,
}

impl EventRing {
    fn new(ctx: &Arc<Context>) -> Result<EventRing> {
        let mut slots = Vec::with_capacity(TIMER_RING_DEPTH);
        for _ in 0..TIMER_RING_DEPTH {
            slots.push([
                Event::new(ctx, true)?,
                Event::new(ctx, true)?,
                Event::new(ctx, true)?,
                Event::new(ctx, true)?,
            ]);
        }
        Ok(EventRing {
            slots,
            recorded: vec![false; TIMER_RING_DEPTH],
            current: 0,
            started: false,
        })
    }

    /// Moves to the next slot, collects what it measured [`TIMER_RING_DEPTH`] frames ago, and
    /// returns its events to record this frame.
    fn begin_frame(&mut self, profiler: &mut Profiler) -> Result<&[Event; 4]> {
        if self.started {
            self.current = (self.current + 1) % self.slots.len();
        }
        self.started = true;
        self.collect(self.current, profiler)?;
        Ok(&self.slots[self.current])
    }

    fn end_frame(&mut self) {
        self.recorded[self.current] = true;
    }

    fn collect(&mut self, slot: usize, profiler: &mut Profiler) -> Result<()> {
        if !std::mem::take(&mut self.recorded[slot]) {
            return Ok(());
        }
        let [before_map, after_map, after_kernel, after_unmap] = &self.slots[slot];
        // The event follows a map, which waits for GL's earlier use of the resource: the wait
        // flushes GL so that work queued on this thread reaches the GPU.
        wait_for_gpu("a CUDA timing event", || {
            after_unmap.query().context("waiting for a timing event")
        })?;
        for (stage, start, end) in [
            (Stage::Map, before_map, after_map),
            (Stage::Kernel, after_map, after_kernel),
            (Stage::Unmap, after_kernel, after_unmap),
        ] {
            let ms = end
                .elapsed_ms_since(start)
                .context("reading a timing event")?;
            profiler.record(stage, Clock::CudaEvent, f64::from(ms) * 1e3);
        }
        Ok(())
    }

    fn drain(&mut self, profiler: &mut Profiler) -> Result<()> {
        for slot in 0..self.slots.len() {
            self.collect(slot, profiler)?;
        }
        Ok(())
    }
}
