//! The wgpu examples' (12, 14) device: CUDA device 0's context, a wgpu instance with the Vulkan
//! backend only, and the wgpu device on the CUDA GPU (`wgpu_interop::find_adapter`, then
//! `open_device`), where the
//! target runs in interop mode; or (12's `--gl`, feature `wgpu-gl`) a device of wgpu's GL
//! backend over the GL context current on the CUDA GPU (`open_gl_adapter`, then
//! `open_gl_device`: [`Wgpu::open_gl`]). For a window, a device on the CUDA GPU is of use only if that
//! GPU's Vulkan adapter can present to the window's surface: NVIDIA's Vulkan driver may not
//! present to an X server that is not NVIDIA's (Xvfb, a remote desktop), nor a laptop's NVIDIA
//! GPU to a display that belongs to the integrated one. There the window runs on an adapter that
//! can present to it ([`presenting_adapter`]; under Xvfb, Mesa's lavapipe), the target in staged
//! mode, and the run says which adapter and why. wgpu's uncaptured errors (its default handler
//! panics) are recorded and end the run as errors.
//! Not part of `common/mod.rs`, which builds without the `wgpu` feature: a wgpu example includes
//! it on its own (`#[path = "common/wgpu_device.rs"] mod wgpu_device;`).
// 12 makes its window's surface itself (`Wgpu::for_surface`); 14's is eframe's, which picks the
// adapter through `presenting_adapter`.
#![allow(dead_code)]

use crate::common::{Unavailable, device_0};
use anyhow::{Result, anyhow, bail};
use cuda_gl::Context;
use cuda_gl::wgpu_interop::{find_adapter, open_device};
#[cfg(feature = "wgpu-gl")]
use cuda_gl::wgpu_interop::{open_gl_adapter, open_gl_device};
use std::sync::{Arc, Mutex};

/// CUDA device 0's context, or [`Unavailable`] without a CUDA device 0.
pub fn cuda() -> Result<Arc<Context>> {
    Ok(Context::new(&device_0()?)?)
}

/// A wgpu instance with the Vulkan backend only: the hand-off to CUDA is Vulkan's.
pub fn instance() -> wgpu::Instance {
    wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::VULKAN,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    })
}

/// cuda-gl's error from `what`: [`Unavailable`] (exit 2) when it says that this machine cannot
/// do it (`Error::is_unsupported_setup`: no Vulkan adapter on the CUDA GPU, a missing
/// extension...), a failure otherwise.
pub fn setup_error(what: &'static str) -> impl FnOnce(cuda_gl::Error) -> anyhow::Error {
    move |e| {
        if e.is_unsupported_setup() {
            anyhow!(Unavailable(format!("{what}: {e}")))
        } else {
            anyhow::Error::new(e).context(what)
        }
    }
}

/// An adapter in a line: its name and driver.
pub fn describe(adapter: &wgpu::Adapter) -> String {
    let info = adapter.get_info();
    format!("{} ({} {})", info.name, info.driver, info.driver_info)
}

/// The adapter of `adapters` to present to `surface` with: the first that can, other than
/// `not` (the CUDA GPU's, which could not). The error says which adapters there are and what to
/// install (the message eframe's adapter selector returns).
pub fn presenting_adapter(
    adapters: &[wgpu::Adapter],
    surface: &wgpu::Surface<'_>,
    not: Option<&wgpu::AdapterInfo>,
) -> Result<wgpu::Adapter, String> {
    let found = adapters
        .iter()
        .find(|a| Some(&a.get_info()) != not && a.is_surface_supported(surface));
    match found {
        Some(adapter) => Ok(adapter.clone()),
        None => {
            let seen: Vec<String> = adapters.iter().map(describe).collect();
            Err(format!(
                "no other Vulkan adapter can present to this window either (adapters: {}); \
                 help: install one that can, e.g. Mesa's lavapipe (mesa-vulkan-drivers), or \
                 open the window on an X server that runs on the CUDA GPU",
                if seen.is_empty() {
                    "none".into()
                } else {
                    seen.join(", ")
                }
            ))
        }
    }
}

/// Whether `gpu`'s device can configure `surface` at `size` with the adapter's default
/// configuration: wgpu's error when it cannot (a driver may say it supports a surface and then
/// fail to make its swapchain).
fn configures(gpu: &Wgpu, surface: &wgpu::Surface<'_>, (w, h): (u32, u32)) -> Result<(), String> {
    let config = surface
        .get_default_config(&gpu.adapter, w, h)
        .ok_or("it offers no format for it")?;
    let scope = gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
    surface.configure(&gpu.device, &config);
    match pollster::block_on(scope.pop()) {
        None => Ok(()),
        Some(e) => Err(format!("wgpu could not configure the surface with it: {e}")),
    }
}

/// A wgpu device, the first wgpu error that no error scope caught, and why the device is not
/// on the CUDA GPU when it is not.
pub struct Wgpu {
    pub adapter: wgpu::Adapter,
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    /// Filled by the device's uncaptured-error handler (wgpu's own would panic).
    errors: Arc<Mutex<Option<String>>>,
    /// Why the window runs on another adapter than the CUDA GPU's (`None`: on the CUDA GPU).
    pub fallback: Option<String>,
}

impl Wgpu {
    /// Opens the wgpu device on the Vulkan adapter of `instance` that is CUDA context `ctx`'s
    /// GPU, and says which it is.
    ///
    /// # Errors
    /// [`Unavailable`] when this machine has no such adapter (cuda-gl's typed error, with what
    /// to install).
    pub fn open(instance: &wgpu::Instance, ctx: &Arc<Context>) -> Result<Wgpu> {
        let adapter = find_adapter(instance, ctx)
            .map_err(setup_error("finding the wgpu adapter on the CUDA GPU"))?;
        let (device, queue) = open_device(&adapter, ctx, &wgpu::DeviceDescriptor::default())
            .map_err(setup_error("opening the wgpu device on the CUDA GPU"))?;
        Ok(Wgpu::watch(adapter, device, queue, None))
    }

    /// Opens a wgpu device of wgpu's GL backend over the GL context current on this thread (the
    /// GL route), once that context is found on the GPU of CUDA context `ctx`, and says which
    /// it is. It asks for the adapter's own limits: wgpu's `Limits::default()` asks for more
    /// than some GL drivers have.
    ///
    /// # Safety
    /// `open_gl_adapter`'s, which this forwards: wgpu calls GL through whatever context is
    /// current, unchecked.
    /// 1. The GL context current now is current on this thread whenever the device, its queue
    ///    or anything made from them (a `WgpuTarget` too) is made, used or dropped: so it is
    ///    destroyed only after all of them are dropped.
    /// 2. The program's own GL calls on it leave wgpu's GL objects alone and put back what they
    ///    bind.
    ///
    /// # Errors
    /// [`Unavailable`] when the current context is not NVIDIA's on the CUDA GPU, or wgpu's GL
    /// backend does not take it (cuda-gl's typed error, with what to do).
    #[cfg(feature = "wgpu-gl")]
    pub unsafe fn open_gl(ctx: &Arc<Context>) -> Result<Wgpu> {
        // wgpu's own GL instance is not used (it would make a GL context of its own, where CUDA
        // can never map a texture): an instance with no backend holds the adapter.
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends: wgpu::Backends::empty(),
            ..wgpu::InstanceDescriptor::new_without_display_handle()
        });
        // SAFETY: (1) and (2) of this function's `# Safety`, forwarded to its caller.
        let adapter = unsafe { open_gl_adapter(&instance, ctx) }.map_err(setup_error(
            "opening wgpu's GL backend over the GL context on the CUDA GPU",
        ))?;
        let desc = wgpu::DeviceDescriptor {
            required_limits: adapter.limits(),
            ..Default::default()
        };
        let (device, queue) = open_gl_device(&adapter, ctx, &desc)
            .map_err(setup_error("opening the wgpu device on wgpu's GL backend"))?;
        Ok(Wgpu::watch(adapter, device, queue, None))
    }

    /// The device for a window whose `surface` (of `size`) was made by `instance`: on the CUDA
    /// GPU ([`Wgpu::open`]) when its adapter can present to the surface (it says so, and wgpu
    /// configures the surface with it); otherwise on the first adapter that can
    /// ([`presenting_adapter`]), with the reason in [`Wgpu::fallback`].
    ///
    /// # Errors
    /// [`Unavailable`] when no adapter can present to the surface.
    pub fn for_surface(
        instance: &wgpu::Instance,
        ctx: &Arc<Context>,
        surface: &wgpu::Surface<'_>,
        size: (u32, u32),
    ) -> Result<Wgpu> {
        let (why, cuda_adapter) = match Wgpu::open(instance, ctx) {
            Ok(gpu) => {
                let refused = if gpu.adapter.is_surface_supported(surface) {
                    match configures(&gpu, surface, size) {
                        Ok(()) => return Ok(gpu),
                        Err(e) => format!("says it can present to this window, but {e}"),
                    }
                } else {
                    "cannot present to this window's surface".into()
                };
                let name = describe(&gpu.adapter);
                (
                    format!("the CUDA GPU's Vulkan adapter, {name}, {refused}"),
                    Some(gpu.adapter.get_info()),
                )
            }
            Err(e) if e.is::<Unavailable>() => (format!("{e:#}"), None),
            Err(e) => return Err(e),
        };
        let adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::VULKAN));
        let adapter = presenting_adapter(&adapters, surface, cuda_adapter.as_ref())
            .map_err(|e| anyhow!(Unavailable(format!("{why}, and {e}"))))?;
        let (device, queue) =
            pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor::default()))
                .map_err(|e| anyhow!("opening a wgpu device on {}: {e}", describe(&adapter)))?;
        Ok(Wgpu::watch(adapter, device, queue, Some(why)))
    }

    /// `device` with its uncaptured errors recorded; says which adapter it is on, and why it is
    /// not the CUDA GPU's (`fallback`) when it is not.
    pub fn watch(
        adapter: wgpu::Adapter,
        device: wgpu::Device,
        queue: wgpu::Queue,
        fallback: Option<String>,
    ) -> Wgpu {
        let info = adapter.get_info();
        println!("wgpu {:?}: {}", info.backend, describe(&adapter));
        if let Some(why) = &fallback {
            println!(
                "{why}: the window runs on {} instead (the target's report says in which mode)",
                info.name
            );
        }
        let errors: Arc<Mutex<Option<String>>> = Arc::default();
        let first = errors.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            if let Ok(mut first) = first.lock() {
                first.get_or_insert_with(|| e.to_string());
            }
        }));
        Wgpu {
            adapter,
            device,
            queue,
            errors,
            fallback,
        }
    }

    /// An error when wgpu reported one (while `doing` something, or earlier).
    pub fn check_errors(&self, doing: &str) -> Result<()> {
        let first = self.errors.lock().ok().and_then(|mut first| first.take());
        match first {
            Some(e) => bail!("wgpu reported an error (while {doing} or before): {e}"),
            None => Ok(()),
        }
    }

    /// Where the frames were shown, for the example's `ok` line: the adapter, and why it is not
    /// the CUDA GPU's when it is not.
    pub fn where_shown(&self) -> String {
        let name = self.adapter.get_info().name;
        match &self.fallback {
            None => format!("on {name}, the CUDA GPU"),
            Some(why) => format!("on {name}, not the CUDA GPU ({why})"),
        }
    }
}
