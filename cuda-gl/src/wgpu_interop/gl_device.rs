//! The GL route's adapter and device (feature `wgpu-gl`), adapter first as in wgpu:
//! [`open_gl_adapter`] opens wgpu's GL backend over the GL context current on the calling
//! thread, once that context is found on the CUDA GPU; [`open_gl_device`] opens a device on
//! that adapter; [`check_gl_device`] checks a device that the application opened itself.

use super::WgpuError;
use super::device::ready;
use crate::context::Context;
use crate::device::check_gl_runs_on;
use crate::error::Result;
use crate::glapi;
use std::sync::Arc;

/// wgpu-hal's GL backend.
pub(super) type Gles = wgpu::hal::api::Gles;

/// Whether `device` runs on wgpu's GL backend, where a target's interop is the GL route's.
pub(super) fn is_gl(device: &wgpu::Device) -> bool {
    device.adapter_info().backend == wgpu::Backend::Gl
}

/// The GL context of the program's that `device` runs on (current now: `open_gl_adapter`'s
/// `# Safety`), for the checks of what wgpu makes, uses and deletes in staged mode there; `None`
/// for a device of another backend, of wgpu's own GL context (which wgpu makes current itself),
/// or a context without object labels (no owner check there).
///
/// # Errors
/// [`Error::NoGlContext`](crate::Error::NoGlContext) naming `call` for a device over the
/// program's GL context when no GL context is current: wgpu would make the staged textures with
/// none (refused before it does).
pub(super) fn program_gl_owner(
    device: &wgpu::Device,
    call: &'static str,
) -> Result<Option<crate::glapi::GlOwner>> {
    if !is_gl(device) || check_gl_backend(device, call).is_err() {
        return Ok(None);
    }
    match crate::glapi::GlOwner::current(call) {
        Ok((owner, _)) => Ok(Some(owner)),
        Err(e @ crate::Error::NoGlContext { .. }) => Err(e),
        // A context without labels (or one cuda-gl could not check otherwise): staged mode
        // makes no GL call of cuda-gl's, so it runs there unchecked.
        Err(_) => Ok(None),
    }
}

/// Checks that `device` can take frames of CUDA context `ctx` by the GL route: a device of
/// wgpu's GL backend on a context that the application made and keeps current (one from
/// [`open_gl_device`], or its own `wgpu_hal::gles::Adapter::new_external`), not one that wgpu
/// made itself, and the GL context current on this thread runs on the CUDA GPU.
///
/// Which GL context wgpu uses is the one current whenever wgpu is called (the promise of
/// `new_external`, and of [`open_gl_adapter`]'s `# Safety`): call this where the program calls
/// wgpu, with that context current.
///
/// # Errors
/// - [`WgpuError::NotGl`] for a device of another backend;
/// - [`WgpuError::GlOwnContext`] for a device on a GL context that wgpu made itself;
/// - [`Error::NoGlContext`](crate::Error::NoGlContext) when no GL context is current;
/// - [`Error::NotNvidiaGl`](crate::Error::NotNvidiaGl) for a GL context that is not
///   NVIDIA's, [`Error::WrongDevice`](crate::Error::WrongDevice) for one on another GPU;
/// - the driver's errors from binding `ctx` and `cuGLGetDevices`.
pub fn check_gl_device(device: &wgpu::Device, ctx: &Arc<Context>) -> Result<()> {
    const CALL: &str = "cuda_gl::wgpu_interop::check_gl_device";
    check_gl_backend(device, CALL)?;
    check_current_gl(ctx, CALL)
}

/// The part of [`check_gl_device`] that asks wgpu only: a device of wgpu's GL backend on a GL
/// context that wgpu did not make.
///
/// # Errors
/// [`WgpuError::NotGl`], [`WgpuError::GlOwnContext`], naming `call`.
pub(super) fn check_gl_backend(device: &wgpu::Device, call: &'static str) -> Result<()> {
    // SAFETY: the guard is only read (who made the GL context) and dropped here.
    let owned = unsafe { device.as_hal::<Gles>() }.map(|hal| hal.context().is_owned());
    gl_route_takes(call, "device", device.adapter_info().backend, owned)
}

/// [`check_gl_backend`] of an adapter: one of wgpu's GL backend on a GL context that wgpu did
/// not make.
///
/// # Errors
/// [`WgpuError::NotGl`], [`WgpuError::GlOwnContext`], naming `call`.
pub(super) fn check_gl_adapter(adapter: &wgpu::Adapter, call: &'static str) -> Result<()> {
    // SAFETY: the guard is only read (who made the GL context) and dropped here.
    let owned = unsafe { adapter.as_hal::<Gles>() }.map(|hal| hal.adapter_context().is_owned());
    gl_route_takes(call, "adapter", adapter.get_info().backend, owned)
}

/// The GL route's refusal of a wgpu `what` (adapter or device) of `backend`, whose GL context
/// wgpu made itself (`owned`: `Some(true)`), or that is not of wgpu's GL backend (`None`).
///
/// # Errors
/// [`WgpuError::NotGl`], [`WgpuError::GlOwnContext`], naming `call`.
fn gl_route_takes(
    call: &'static str,
    what: &'static str,
    backend: wgpu::Backend,
    owned: Option<bool>,
) -> Result<()> {
    match owned {
        None => Err(WgpuError::NotGl {
            call,
            what,
            backend: format!("{backend:?}"),
        }
        .into()),
        Some(true) => Err(WgpuError::GlOwnContext { call }.into()),
        Some(false) => Ok(()),
    }
}

/// Refuses `call` unless a GL context is current on this thread and runs on the GPU of `ctx`.
///
/// # Errors
/// As [`check_gl_device`], but for the backend's.
fn check_current_gl(ctx: &Context, call: &'static str) -> Result<()> {
    glapi::current_gl(call)?;
    ctx.bind()?;
    check_gl_runs_on(ctx.device())
}

/// wgpu's GL backend over the GL context current on the calling thread, as a `wgpu::Adapter`
/// held by `instance`, once that context is found on the GPU of CUDA context `ctx`: the first
/// step of wgpu's own flow, adapter first, then device. Read its `limits()` and `features()`
/// to choose the `wgpu::DeviceDescriptor`, then open the device with [`open_gl_device`]: a
/// device on which a [`WgpuTarget`](super::WgpuTarget) writes frames, and a
/// [`WgpuVideoPlanes`](super::WgpuVideoPlanes) uploads planes, by the GL route (their textures
/// registered with CUDA, ordered by map and unmap in that context).
///
/// The context: cuda-gl's [`HeadlessContext::for_cuda_device`](crate::egl::HeadlessContext)
/// (OpenGL 4.5 core, on the CUDA GPU whatever the enumeration order), or the application's own
/// (a window's), OpenGL 3.3 or OpenGL ES 3.0 or later, NVIDIA's, on the CUDA GPU. wgpu's own
/// GL instance (`Backends::GL`) is not used: `instance` only holds the adapter, and may have
/// no backend at all (`wgpu::Backends::empty()` opens nothing of its own). wgpu's GL options
/// are `wgpu::GlBackendOptions::from_env_or_default()`.
///
/// ```no_run
/// use cuda_gl::display::{Format, Layout};
/// use cuda_gl::egl::HeadlessContext;
/// use cuda_gl::wgpu_interop::{WgpuTarget, open_gl_adapter, open_gl_device};
/// use cuda_gl::{Context, Device, wgpu};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let device = Device::get(0)?;
/// // Current on this thread from now on; declared first, so dropped after the wgpu objects.
/// let gl = HeadlessContext::for_cuda_device(&device)?;
/// let ctx = Context::new(&device)?;
/// let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
///     backends: wgpu::Backends::empty(),
///     ..wgpu::InstanceDescriptor::new_without_display_handle()
/// });
/// // SAFETY: `gl` stays current on this thread, the only one that uses wgpu, until the wgpu
/// // objects (the target included) are dropped, which they are before `gl`.
/// let adapter = unsafe { open_gl_adapter(&instance, &ctx) }?;
/// let desc = wgpu::DeviceDescriptor {
///     // What every OpenGL 4.3 offers, with textures as large as this GL allows (or all of
///     // `adapter.limits()`): wgpu's `Limits::default()` asks more than some GL drivers have.
///     required_limits: wgpu::Limits::downlevel_defaults().using_resolution(adapter.limits()),
///     ..Default::default()
/// };
/// let (wgpu_device, queue) = open_gl_device(&adapter, &ctx, &desc)?;
/// let layout = Layout::packed((1920, 1080), Format::Rgba8)?;
/// let (_target, report) = WgpuTarget::new(&ctx, &wgpu_device, &queue, layout, None)?;
/// println!("{report}"); // "display: interop; wgpu GL: NVIDIA H200/PCIe/SSE2, ..."
/// # Ok(())
/// # }
/// ```
///
/// # Safety
/// wgpu's GL backend calls GL through whatever context is current on the thread that calls
/// wgpu, unchecked (`wgpu_hal::gles::Adapter::new_external`'s contract, which this forwards):
/// 1. The GL context current now is current on whichever thread makes, uses or drops the
///    returned adapter, or anything made from it (the device and queue of [`open_gl_device`]
///    or `Adapter::request_device`, and everything made from those), whenever it does: in the
///    program's wgpu calls (`Queue::submit`, `Device::poll`, and the drops of textures,
///    buffers, command buffers, the device itself), and in cuda-gl's on its behalf (a
///    [`WgpuTarget`](super::WgpuTarget)'s `new`, frames, presents, shows, `resize`,
///    `read_pixels` and drop; a [`WgpuVideoPlanes`](super::WgpuVideoPlanes)' `new`, uploads,
///    `read_planes` and drop). So it is destroyed only after all of them are dropped. The
///    context may move to another thread with them (released on the old thread, made current
///    on the new one, no wgpu call in between); being current on one thread at a time, it
///    keeps wgpu to one thread at a time.
/// 2. The program's own GL calls on that context leave the GL objects wgpu made alone, and
///    put back what they bind (wgpu-hal keeps its own vertex array bound between its calls).
///
/// # Errors
/// - [`Error::NoGlContext`](crate::Error::NoGlContext) when no GL context is current;
/// - [`Error::NotNvidiaGl`](crate::Error::NotNvidiaGl) for a GL context that is not NVIDIA's,
///   [`Error::WrongDevice`](crate::Error::WrongDevice) for one on another GPU than `ctx`'s;
/// - [`WgpuError::GlUnusable`] when wgpu's GL backend does not take the context (before
///   OpenGL 3.3 or OpenGL ES 3.0);
/// - the driver's errors from binding `ctx` and `cuGLGetDevices`.
pub unsafe fn open_gl_adapter(
    instance: &wgpu::Instance,
    ctx: &Arc<Context>,
) -> Result<wgpu::Adapter> {
    const CALL: &str = "cuda_gl::wgpu_interop::open_gl_adapter";
    // Refused before wgpu makes anything in the context.
    check_current_gl(ctx, CALL)?;
    // SAFETY: (1) and (2), forwarded.
    unsafe { adapter_on_current_gl(instance, CALL) }
}

/// Opens a wgpu device on `adapter`, wgpu's GL backend over a GL context that the program keeps
/// current (from [`open_gl_adapter`], or the program's own
/// `wgpu_hal::gles::Adapter::new_external`), once the GL context current on the calling thread
/// is found on the GPU of CUDA context `ctx`: `adapter.request_device(desc)`, whose future is
/// ready at once on native wgpu, with the GL route's refusals first. Returns the device and its
/// queue, as `Adapter::request_device` does. Safe: the adapter's maker vouched for its GL
/// context (`open_gl_adapter`'s `# Safety`, which covers this device and everything made from
/// it).
///
/// # Errors
/// - [`WgpuError::NotGl`] for an adapter of another backend, [`WgpuError::GlOwnContext`] for
///   one on a GL context that wgpu made itself (`Backends::GL`);
/// - [`Error::NoGlContext`](crate::Error::NoGlContext) when no GL context is current;
/// - [`Error::NotNvidiaGl`](crate::Error::NotNvidiaGl) for a GL context that is not NVIDIA's,
///   [`Error::WrongDevice`](crate::Error::WrongDevice) for one on another GPU than `ctx`'s;
/// - [`WgpuError::OpenDevice`] when `desc` asks for features or limits the adapter lacks
///   (`adapter.limits()`: wgpu's `Limits::default()` asks for more than some GL drivers
///   offer, `Limits::downlevel_defaults()` for what every OpenGL 4.3 does);
/// - the driver's errors from binding `ctx` and `cuGLGetDevices`.
pub fn open_gl_device(
    adapter: &wgpu::Adapter,
    ctx: &Arc<Context>,
    desc: &wgpu::DeviceDescriptor<'_>,
) -> Result<(wgpu::Device, wgpu::Queue)> {
    const CALL: &str = "cuda_gl::wgpu_interop::open_gl_device";
    // Refused before wgpu makes anything in the context: the adapter first (wgpu's own GL
    // context has no business with the current one), then the current context.
    check_gl_adapter(adapter, CALL)?;
    check_current_gl(ctx, CALL)?;
    request_device(adapter, desc)
}

/// A wgpu adapter of wgpu's GL backend over the GL context current on this thread, whatever
/// GPU it runs on (no CUDA is asked), held by `instance`.
///
/// # Safety
/// 1. As [`open_gl_adapter`] (1) and (2), for the adapter and everything made from it.
///
/// # Errors
/// As `glapi::current_gl` (no context current, no GL platform), naming `call`;
/// [`WgpuError::GlUnusable`] when wgpu-hal does not take the context.
pub(super) unsafe fn adapter_on_current_gl(
    instance: &wgpu::Instance,
    call: &'static str,
) -> Result<wgpu::Adapter> {
    let (platform, _, fns) = glapi::current_gl(call)?;
    // Through the platform of the current context: its entry points do not depend on the
    // context, and are those its GL calls go to.
    let loader = |name: &str| glapi::proc_address(platform, name);
    // SAFETY: SAFETY G1 of the module docs: a GL context is current (just asked), and (1)
    // forwards the rest of `new_external`'s contract to the caller.
    let exposed =
        unsafe { wgpu::hal::gles::Adapter::new_external(loader, options()) }.ok_or_else(|| {
            WgpuError::GlUnusable {
                call,
                version: fns.string(gl::VERSION).unwrap_or_default(),
            }
        })?;
    // SAFETY: SAFETY G2: a GL adapter of `new_external` belongs to no instance; wgpu-core 30
    // only keeps it in `instance`'s registry.
    Ok(unsafe { instance.create_adapter_from_hal::<Gles>(exposed) })
}

/// wgpu's GL options: its defaults, or what its environment variables say.
fn options() -> wgpu::GlBackendOptions {
    wgpu::GlBackendOptions::from_env_or_default()
}

/// `adapter.request_device(desc)`, whose future is ready at once on native wgpu.
///
/// # Errors
/// [`WgpuError::OpenDevice`] with wgpu's message.
pub(super) fn request_device(
    adapter: &wgpu::Adapter,
    desc: &wgpu::DeviceDescriptor<'_>,
) -> Result<(wgpu::Device, wgpu::Queue)> {
    let call = "wgpu::Adapter::request_device (wgpu's GL backend)";
    match ready(adapter.request_device(desc)) {
        Some(Ok(opened)) => Ok(opened),
        Some(Err(e)) => Err(WgpuError::OpenDevice {
            call,
            message: e.to_string(),
        }
        .into()),
        None => Err(WgpuError::OpenDevice {
            call,
            message: "wgpu's future was not ready at once".into(),
        }
        .into()),
    }
}
