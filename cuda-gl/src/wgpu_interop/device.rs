//! The wgpu adapter and device on the CUDA GPU, adapter first as in wgpu: [`find_adapter`] picks
//! the Vulkan adapter whose device UUID is the CUDA device's, [`open_device`] opens a device on
//! it with the extensions the hand-off needs; [`check_adapter`] and [`check_device`] check an
//! adapter or device that the application made itself.

use super::vk_info::{self, DEVICE_EXTENSIONS, PhysicalInfo};
use super::{Vulkan, WgpuError};
use crate::context::Context;
use crate::error::Result;
use crate::result;
use ash::vk;
use std::ffi::CStr;
use std::sync::Arc;

/// The CUDA device of `ctx`: its label (name and UUID) and UUID.
fn cuda_identity(ctx: &Context) -> Result<(String, [u8; 16])> {
    let device = ctx.device();
    let uuid = result::device::uuid(device.raw())?;
    let name = device.name().unwrap_or_else(|_| "CUDA device".into());
    Ok((format!("{name} ({})", vk_info::uuid_string(&uuid)), uuid))
}

/// [`WgpuError::NotVulkan`]: the adapter or device (`what`) runs on `backend`.
fn not_vulkan(call: &'static str, what: &'static str, backend: wgpu::Backend) -> crate::Error {
    WgpuError::NotVulkan {
        call,
        what,
        backend: format!("{backend:?}"),
    }
    .into()
}

/// What both the adapter and the device checks ask of a physical device: the CUDA GPU, Vulkan
/// 1.2, timeline semaphores that export as `OPAQUE_FD`.
///
/// # Safety
/// 1. `phd` is a physical device of `shared`'s instance (wgpu-hal's adapter's or device's own).
unsafe fn check_physical(
    call: &'static str,
    what: &'static str,
    shared: &wgpu::hal::vulkan::InstanceShared,
    phd: vk::PhysicalDevice,
    cuda: &(String, [u8; 16]),
) -> Result<PhysicalInfo, WgpuError> {
    let instance = shared.raw_instance();
    // SAFETY: (1); wgpu-hal reports its instance's API version.
    let info = unsafe { vk_info::physical_info(instance, shared.instance_api_version(), phd) }?;
    if info.uuid != cuda.1 {
        return Err(WgpuError::OtherGpu {
            call,
            what,
            vulkan: info.label(),
            cuda: cuda.0.clone(),
        });
    }
    let missing = |missing: String| WgpuError::Missing {
        call,
        device: info.name.clone(),
        missing,
    };
    if info.api_version < vk::API_VERSION_1_2 {
        return Err(missing(format!(
            "Vulkan 1.2 (it offers {})",
            vk_info::version_string(info.api_version)
        )));
    }
    // SAFETY: (1); the device is Vulkan 1.2 (checked above).
    if !unsafe { vk_info::supports_timeline(instance, phd) } {
        return Err(missing("timeline semaphores".into()));
    }
    // SAFETY: as above.
    if !unsafe { vk_info::timeline_exportable(instance, phd) } {
        return Err(WgpuError::NotExportable {
            call,
            what: "a timeline semaphore".into(),
        });
    }
    Ok(info)
}

/// [`WgpuError::Missing`] for the first of [`DEVICE_EXTENSIONS`] that `has` refuses, `why` (e.g.
/// `not enabled`) beside its name.
fn require_extensions(
    call: &'static str,
    info: &PhysicalInfo,
    why: &str,
    has: impl Fn(&'static CStr) -> bool,
) -> Result<(), WgpuError> {
    match DEVICE_EXTENSIONS.into_iter().find(|&ext| !has(ext)) {
        Some(ext) => Err(WgpuError::Missing {
            call,
            device: info.name.clone(),
            missing: format!("{} ({why})", ext.to_string_lossy()),
        }),
        None => Ok(()),
    }
}

/// Checks that `adapter` can share frames with CUDA context `ctx`: a Vulkan adapter of wgpu, on
/// the same GPU (device UUID), Vulkan 1.2 with timeline semaphores that export as file
/// descriptors, offering `VK_KHR_external_memory_fd` and `VK_KHR_external_semaphore_fd`.
///
/// # Errors
/// [`WgpuError::NotVulkan`], [`WgpuError::OtherGpu`], [`WgpuError::Missing`] or
/// [`WgpuError::NotExportable`] (as `Error::Wgpu`); the driver's error from `cuDeviceGetUuid`.
pub fn check_adapter(adapter: &wgpu::Adapter, ctx: &Arc<Context>) -> Result<()> {
    let cuda = cuda_identity(ctx)?;
    check_adapter_for("cuda_gl::wgpu_interop::check_adapter", adapter, &cuda).map(drop)
}

/// [`check_adapter`] against the CUDA device `cuda` ([`cuda_identity`]), its refusals naming
/// `call`.
fn check_adapter_for(
    call: &'static str,
    adapter: &wgpu::Adapter,
    cuda: &(String, [u8; 16]),
) -> Result<PhysicalInfo> {
    // SAFETY: the guard is only read (no handle is destroyed through it) and dropped here.
    let Some(hal) = (unsafe { adapter.as_hal::<Vulkan>() }) else {
        return Err(not_vulkan(call, "adapter", adapter.get_info().backend));
    };
    let (shared, phd) = (hal.shared_instance(), hal.raw_physical_device());
    // SAFETY: wgpu-hal's adapter holds a physical device of its own instance.
    let info = unsafe { check_physical(call, "adapter", shared, phd, cuda) }?;
    let caps = hal.physical_device_capabilities();
    require_extensions(call, &info, "not offered by the driver", |ext| {
        caps.supports_extension(ext)
    })?;
    Ok(info)
}

/// Checks that `device` can share frames with CUDA context `ctx`: what [`check_adapter`] checks,
/// and that `VK_KHR_external_memory_fd` and `VK_KHR_external_semaphore_fd` are enabled on it
/// (which a device from [`open_device`] has; `Adapter::request_device` enables neither).
///
/// # Errors
/// As [`check_adapter`]; [`WgpuError::Missing`] says `(not enabled)` for an extension the
/// adapter offers but the device was opened without.
pub fn check_device(device: &wgpu::Device, ctx: &Arc<Context>) -> Result<()> {
    const CALL: &str = "cuda_gl::wgpu_interop::check_device";
    let cuda = cuda_identity(ctx)?;
    // SAFETY: the guard is only read and dropped here.
    let Some(hal) = (unsafe { device.as_hal::<Vulkan>() }) else {
        return Err(not_vulkan(CALL, "device", device.adapter_info().backend));
    };
    let (shared, phd) = (hal.shared_instance(), hal.raw_physical_device());
    // SAFETY: wgpu-hal's device was opened on this physical device of its own instance.
    let info = unsafe { check_physical(CALL, "device", shared, phd, &cuda) }?;
    let enabled = hal.enabled_device_extensions();
    require_extensions(CALL, &info, "not enabled", |ext| enabled.contains(&ext))?;
    Ok(())
}

/// The value of a future that is ready on its first poll, as wgpu's native futures are.
pub(super) fn ready<F: std::future::Future>(f: F) -> Option<F::Output> {
    let mut f = std::pin::pin!(f);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match f.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(v) => Some(v),
        std::task::Poll::Pending => None,
    }
}

/// The Vulkan adapter of `instance` on the GPU of CUDA context `ctx` (its device UUID is the
/// CUDA device's), once [`check_adapter`] takes it: the first step of wgpu's own flow, adapter
/// first, then device. Read its `limits()` and `features()` to choose the
/// `wgpu::DeviceDescriptor`, then open the device with [`open_device`].
///
/// `instance` must have the Vulkan backend (`wgpu::Backends::VULKAN`).
///
/// ```no_run
/// use cuda_gl::wgpu_interop::{find_adapter, open_device};
/// use cuda_gl::{Context, Device};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let ctx = Context::new(&Device::get(0)?)?;
/// let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
///     backends: wgpu::Backends::VULKAN,
///     ..wgpu::InstanceDescriptor::new_without_display_handle()
/// });
/// let adapter = find_adapter(&instance, &ctx)?;
/// let desc = wgpu::DeviceDescriptor {
///     // wgpu's defaults with the adapter's largest textures (all of `adapter.limits()` would
///     // ask for every limit it has).
///     required_limits: wgpu::Limits::default().using_resolution(adapter.limits()),
///     ..Default::default()
/// };
/// let (device, queue) = open_device(&adapter, &ctx, &desc)?;
/// # Ok(())
/// # }
/// ```
///
/// # Errors
/// - [`WgpuError::NoAdapter`] when no Vulkan adapter of `instance` is the CUDA device (it lists
///   those seen);
/// - what [`check_adapter`] refuses of the CUDA GPU's adapter (an extension its driver lacks);
/// - the driver's error from `cuDeviceGetUuid`.
pub fn find_adapter(instance: &wgpu::Instance, ctx: &Arc<Context>) -> Result<wgpu::Adapter> {
    const CALL: &str = "cuda_gl::wgpu_interop::find_adapter";
    let cuda = cuda_identity(ctx)?;
    let adapters = ready(instance.enumerate_adapters(wgpu::Backends::VULKAN)).unwrap_or_default();
    let mut seen = Vec::new();
    for adapter in adapters {
        match check_adapter_for(CALL, &adapter, &cuda) {
            Err(crate::Error::Wgpu(WgpuError::OtherGpu { vulkan, .. })) => seen.push(vulkan),
            Err(e) => return Err(e),
            Ok(_) => return Ok(adapter),
        }
    }
    Err(WgpuError::NoAdapter {
        call: CALL,
        cuda: cuda.0,
        seen: if seen.is_empty() {
            "none".into()
        } else {
            seen.join(", ")
        },
    }
    .into())
}

/// Opens a wgpu device on `adapter` (from [`find_adapter`], or any that [`check_adapter`]
/// takes) ready for [`SharedTexture`](super::SharedTexture), [`WgpuTarget`](super::WgpuTarget)
/// and [`WgpuVideoPlanes`](super::WgpuVideoPlanes) in interop mode: opened through wgpu-hal
/// with `VK_KHR_external_memory_fd` and `VK_KHR_external_semaphore_fd` added to what `desc`
/// asks for (timeline semaphores are Vulkan 1.2 core, and wgpu enables them wherever they are
/// supported). Returns the device and its queue, as `Adapter::request_device` does.
///
/// The device also has `wgpu::Features::TEXTURE_FORMAT_16BIT_NORM` where the adapter offers it
/// (the `R16Unorm` and `Rg16Unorm` textures of P010 frames' planes,
/// [`WgpuVideoPlanes`](super::WgpuVideoPlanes)): a feature only allows more, and
/// `device.features()` lists it.
///
/// # Errors
/// - what [`check_adapter`] refuses (an adapter of another backend or GPU, or without the
///   extensions), checked first: the extensions are added only where the adapter offers them;
/// - [`WgpuError::OpenDevice`] when `desc` asks for features or limits the adapter lacks
///   (`adapter.features()`, `adapter.limits()`), or wgpu-hal or wgpu fails to open the device;
/// - the driver's error from `cuDeviceGetUuid`.
pub fn open_device(
    adapter: &wgpu::Adapter,
    ctx: &Arc<Context>,
    desc: &wgpu::DeviceDescriptor<'_>,
) -> Result<(wgpu::Device, wgpu::Queue)> {
    const CALL: &str = "cuda_gl::wgpu_interop::open_device";
    let cuda = cuda_identity(ctx)?;
    // The callback's contract (SAFETY 1) needs the extensions offered: checked here, whatever
    // adapter the caller gives.
    check_adapter_for(CALL, adapter, &cuda)?;
    let open_error = |message: String| WgpuError::OpenDevice {
        call: "wgpu_hal::vulkan::Adapter::open_with_callback",
        message,
    };
    if !adapter.features().contains(desc.required_features) {
        return Err(open_error(format!(
            "the adapter lacks features {:?}",
            desc.required_features - adapter.features()
        ))
        .into());
    }
    if !desc.required_limits.check_limits(&adapter.limits()) {
        return Err(open_error("the adapter does not offer the limits asked for".into()).into());
    }
    // The adapter's, so still all the adapter's (SAFETY 1).
    let extra = adapter.features() & wgpu::Features::TEXTURE_FORMAT_16BIT_NORM;
    let desc = wgpu::DeviceDescriptor {
        required_features: desc.required_features | extra,
        ..desc.clone()
    };
    let open = {
        // SAFETY: only used to open a device, and dropped before the adapter is used again.
        let Some(hal) = (unsafe { adapter.as_hal::<Vulkan>() }) else {
            return Err(open_error("the adapter is not Vulkan".into()).into());
        };
        let add_extensions = |args: wgpu::hal::vulkan::CreateDeviceCallbackArgs<'_, '_, '_>| {
            for ext in DEVICE_EXTENSIONS {
                if !args.extensions.contains(&ext) {
                    args.extensions.push(ext);
                }
            }
        };
        // SAFETY: `open_with_callback`'s contract (SAFETY 1 in the module docs): the features
        // and limits are the adapter's (checked above); the callback only adds extensions that
        // the adapter offers (checked by `check_adapter_for`), and removes or changes nothing.
        unsafe {
            hal.open_with_callback(
                desc.required_features,
                &desc.required_limits,
                &desc.memory_hints,
                Some(Box::new(add_extensions)),
            )
        }
        .map_err(|e| open_error(e.to_string()))?
    };
    // SAFETY: `create_device_from_hal`'s contract (SAFETY 2): the device was opened from this
    // adapter's own wgpu-hal adapter, with exactly `desc.required_features`.
    let (device, queue) = unsafe { adapter.create_device_from_hal::<Vulkan>(open, &desc) }
        .map_err(|e| WgpuError::OpenDevice {
            call: "wgpu::Adapter::create_device_from_hal",
            message: e.to_string(),
        })?;
    check_device(&device, ctx)?;
    Ok((device, queue))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn a_ready_future_is_read_and_a_pending_one_is_not() {
        assert_eq!(ready(std::future::ready(7)), Some(7));
        assert_eq!(ready(std::future::pending::<u8>()), None);
    }
}
