//! The device every case runs on: the CUDA context, a headless GL context on the same GPU, the
//! stream, the plasma kernels and the blit program, and the error of a plain driver call.

use crate::glres::{self, Blit};
use anyhow::{Context as _, Result, bail, ensure};
use cuda_gl::Surface;
use cuda_gl::egl::HeadlessContext;
use cuda_gl::sys;
use cuda_gl::{
    Context, Device, DeviceBuffer, DevicePtr, Function, KernelParam, LaunchConfig, Module,
    PinnedBuffer, Stream, StreamFlags,
};
use std::sync::Arc;

/// What the report says about the device.
#[derive(Debug, Clone)]
pub struct DeviceInfo {
    /// CUDA device name.
    pub name: String,
    /// PCI bus id.
    pub pci_bus_id: String,
    /// `GL_RENDERER`.
    pub gl_renderer: String,
    /// `GL_VERSION` (which carries the NVIDIA driver version).
    pub gl_version: String,
}

/// Which OpenGL a run may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GlChoice {
    /// NVIDIA's, on the CUDA GPU: every group that maps GL objects into CUDA needs it.
    Nvidia,
    /// NVIDIA's on the CUDA GPU where EGL offers it, else any OpenGL EGL opens (Mesa's llvmpipe,
    /// say): for the present group alone, whose staged rows run on any GL.
    Any,
}

/// Everything one device's cases share. Fields drop in order: CUDA objects and GL objects
/// first, the CUDA context handle next, and the GL context last.
pub struct Gpu {
    /// The stream every case uses unless it compares stream kinds (created non-blocking).
    pub stream: Stream,
    /// `plasma_pbo(uchar4* out, int w, int h, float t)`.
    pub plasma_pbo: Function,
    /// `plasma_surface(cudaSurfaceObject_t s, int w, int h, float t)`.
    pub plasma_surface: Function,
    /// The full-screen-triangle draw of a texture into a framebuffer.
    pub blit: Blit,
    /// The CUDA primary context.
    pub ctx: Arc<Context>,
    /// For the report.
    pub info: DeviceInfo,
    /// The headless GL context on the same GPU, current on this thread.
    _egl: HeadlessContext,
}

impl Gpu {
    /// Opens CUDA device `ordinal`, a headless OpenGL context on the same GPU (with
    /// [`GlChoice::Any`], any headless OpenGL when there is none there), a stream, and loads the
    /// plasma kernels from `ptx`.
    pub fn open(ordinal: usize, ptx: &str, choice: GlChoice) -> Result<Gpu> {
        let device =
            Device::get(ordinal).with_context(|| format!("opening CUDA device {ordinal}"))?;
        let ctx = Context::new(&device)
            .with_context(|| format!("retaining the primary context of CUDA device {ordinal}"))?;
        let what = || format!("creating a headless OpenGL context on CUDA device {ordinal}");
        let egl = match HeadlessContext::for_cuda_device(&device) {
            Ok(egl) => egl,
            Err(e) if choice == GlChoice::Any => {
                eprintln!(
                    "interop: no OpenGL on CUDA device {ordinal} ({}); using any headless \
                     OpenGL",
                    e.to_string().lines().next().unwrap_or_default()
                );
                HeadlessContext::any_gl().context("creating any headless OpenGL context")?
            }
            Err(e) => return Err(e).with_context(what),
        };
        gl::load_with(|name| egl.get_proc_address(name));
        if egl.is_software() && choice == GlChoice::Nvidia {
            bail!(
                "the OpenGL context on CUDA device {ordinal} is a software renderer ({}); \
                 interop needs NVIDIA's OpenGL (--present-only runs on any OpenGL)",
                egl.renderer()
            );
        }
        glres::require_version(4, 3)?;
        ctx.bind()?;
        let stream =
            Stream::new(&ctx, StreamFlags::NonBlocking).context("creating a CUDA stream")?;
        let module = Module::from_ptx(&ctx, ptx).context("loading plasma.ptx")?;
        let plasma_pbo = module.function("plasma_pbo")?;
        let plasma_surface = module.function("plasma_surface")?;
        let blit = Blit::new()?;
        let info = DeviceInfo {
            name: device.name()?,
            pci_bus_id: device.pci_bus_id()?,
            gl_renderer: egl.renderer(),
            gl_version: egl.version(),
        };
        Ok(Gpu {
            stream,
            plasma_pbo,
            plasma_surface,
            blit,
            ctx,
            info,
            _egl: egl,
        })
    }

    /// The address of the GL entry point `name` in the headless context, for loaders such as
    /// the benchmark's own Vulkan interop probe.
    pub fn gl_proc_address(&self, name: &str) -> *const std::ffi::c_void {
        self._egl.get_proc_address(name)
    }

    /// `bytes` zeroed bytes of device memory in the context.
    pub fn device_bytes(&self, bytes: usize) -> Result<DeviceBuffer<u8>> {
        DeviceBuffer::zeroed(&self.ctx, bytes)
            .with_context(|| format!("allocating {bytes} bytes of device memory"))
    }

    /// `bytes` zeroed bytes of pinned host memory in the context.
    pub fn pinned_bytes(&self, bytes: usize) -> Result<PinnedBuffer<u8>> {
        PinnedBuffer::zeroed(&self.ctx, bytes)
            .with_context(|| format!("allocating {bytes} bytes of pinned host memory"))
    }

    /// [`Gpu::plasma_into`] the whole of `device`.
    pub fn plasma_into_buffer(
        &self,
        device: &DeviceBuffer<u8>,
        size: (u32, u32),
        t: f32,
    ) -> Result<()> {
        self.plasma_into(device.device_ptr(), device.byte_len(), size, t)
    }

    /// The CUDA half of every handoff floor and baseline: [`Gpu::plasma_into_buffer`], then
    /// the stream's sync.
    pub fn plasma_synced(&self, device: &DeviceBuffer<u8>, size: (u32, u32), t: f32) -> Result<()> {
        self.plasma_into_buffer(device, size, t)?;
        self.stream.synchronize()?;
        Ok(())
    }

    /// Queues `plasma_pbo` writing a `w` x `h` frame at time `t` to `out` (`bytes` long).
    pub fn plasma_into(
        &self,
        out: DevicePtr<'_>,
        bytes: usize,
        (w, h): (u32, u32),
        t: f32,
    ) -> Result<()> {
        ensure!(
            bytes >= w as usize * h as usize * 4,
            "{bytes} bytes cannot hold a {w}x{h} RGBA8 frame"
        );
        // SAFETY: (1) `out` holds the whole frame (checked above) and stays valid until the
        // kernel has finished: callers synchronize the stream or unmap on it (which orders after
        // the kernel) before the memory goes away; a mapped `out` is of a mapping on
        // `self.stream`, as every caller maps on it. (2) `plasma_pbo` takes
        // `(uchar4*, int, int, float)`.
        unsafe { self.launch_plasma(&self.plasma_pbo, out, (w, h), t) }
    }

    /// Queues `plasma_surface` writing a `w` x `h` frame at time `t` through `surface`.
    pub fn plasma_into_surface(
        &self,
        surface: Surface<'_>,
        size: (u32, u32),
        t: f32,
    ) -> Result<()> {
        // SAFETY: (1) every caller passes a surface of a mapped RGBA8 image, of a display
        // frame (a mapped texture, the target's array, or a wgpu target's shared image), or of
        // a `SharedTexture` write, of at least the frame's size, which stays mapped or
        // allocated until an unmap, a present or the write's `finish` on `self.stream` after
        // this launch.
        // (2) `plasma_surface` takes `(cudaSurfaceObject_t, int, int, float)`.
        unsafe { self.launch_plasma(&self.plasma_surface, surface, size, t) }
    }

    /// [`Gpu::plasma_into_surface`] or [`Gpu::plasma_into`] through a raw handle that no
    /// cuda-gl type holds: the same kernels and launch.
    ///
    /// # Safety
    /// 1. `out` is, in this context, a live surface object of an RGBA8 array of at least
    ///    `size`, or a device address of at least `size.0 * size.1 * 4` bytes, which stays
    ///    alive (allocated), and which no other API accesses, until the kernel has finished
    ///    (work queued on `self.stream` after this launch orders after it).
    #[cfg(feature = "wgpu")]
    pub unsafe fn plasma_into_raw(&self, out: RawOut, size: (u32, u32), t: f32) -> Result<()> {
        // SAFETY: the caller's (1) gives `launch_plasma`'s (1) (no mapping is involved); (2)
        // `plasma_surface` takes `(cudaSurfaceObject_t, int, int, float)`, a
        // `cudaSurfaceObject_t` being the 64-bit `CUsurfObject`, and `plasma_pbo` takes
        // `(uchar4*, int, int, float)`, a device pointer being the 64-bit `CUdeviceptr`.
        unsafe {
            match out {
                RawOut::Surface(surface) => {
                    self.launch_plasma(&self.plasma_surface, surface, size, t)
                }
                RawOut::Ptr(ptr) => self.launch_plasma(&self.plasma_pbo, ptr, size, t),
            }
        }
    }

    /// Queues `kernel` over a `w` x `h` frame on the bench stream with the arguments
    /// `(out, w, h, t)`; the launch also checks them against the PTX.
    ///
    /// # Safety
    /// 1. `out` is where the kernel writes the whole `w` x `h` RGBA8 frame, and stays valid
    ///    until the kernel has finished; a pointer or surface of a mapping is of one mapped on
    ///    `self.stream`, unmapped after this launch.
    /// 2. `kernel` takes `(O, int, int, float)`.
    unsafe fn launch_plasma<O: KernelParam>(
        &self,
        kernel: &Function,
        out: O,
        (w, h): (u32, u32),
        t: f32,
    ) -> Result<()> {
        let args = (out, i32::try_from(w)?, i32::try_from(h)?, t);
        // SAFETY: the caller's (1) and (2) give `launch`'s (1); the frame is written by this
        // kernel alone, in stream order (2); a mapping's `out` is used on its mapping's stream
        // (1), which is `self.stream` (3).
        unsafe { kernel.launch(LaunchConfig::for_image(w, h), &self.stream, args) }?;
        Ok(())
    }
}

/// Where [`Gpu::plasma_into_raw`] writes a frame: a handle of the wgpu present group's
/// routes made of plain calls. Both are 64-bit integers; this says which kernel takes it.
#[cfg(feature = "wgpu")]
#[derive(Debug, Clone, Copy)]
pub enum RawOut {
    /// A surface object of an RGBA8 array (the plain-call route's image), for `plasma_surface`.
    Surface(sys::CUsurfObject),
    /// A device address of packed RGBA8 rows (gyroflow's way: CUDA's mapping of a Vulkan
    /// image's memory), for `plasma_pbo`.
    Ptr(sys::CUdeviceptr),
}

/// Turns a `CUresult` into an error naming the call.
pub(crate) fn cu(call: &str, rc: sys::CUresult) -> Result<()> {
    if rc.is_success() {
        return Ok(());
    }
    let mut name: *const std::ffi::c_char = std::ptr::null();
    let known = match sys::driver() {
        // SAFETY: cuGetErrorName only writes a pointer to a static string into `name`.
        Ok(driver) => unsafe { driver.cuGetErrorName(rc, &mut name) }.is_success(),
        Err(_) => false,
    };
    let name = if known && !name.is_null() {
        // SAFETY: on success the driver returned a NUL-terminated static string.
        unsafe { std::ffi::CStr::from_ptr(name) }
            .to_string_lossy()
            .into_owned()
    } else {
        "an unknown code".to_string()
    };
    bail!("{call} failed with {name} ({})", rc.0)
}
