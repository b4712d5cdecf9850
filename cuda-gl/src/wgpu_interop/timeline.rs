//! The timeline semaphore of a shared texture: a Vulkan semaphore exported as an `OPAQUE_FD`
//! and imported into CUDA, so that each side waits for the other on the GPU.

use super::WgpuError;
use super::vk_info::{DeviceFns, exported_fd, vk_error};
use crate::context::Context;
use crate::error::Result;
use crate::result;
use ash::vk;
use cuda_gl_sys as sys;
use std::os::fd::OwnedFd;
use std::sync::Arc;

/// The Vulkan semaphore, destroyed on drop.
///
/// Invariant (as `VkImageMemory`'s): dropped only when no queue waits on or signals it.
#[derive(Debug)]
pub(super) struct VkTimeline {
    device: DeviceFns,
    pub raw: vk::Semaphore,
}

impl VkTimeline {
    /// A timeline semaphore at value 0, exportable as an `OPAQUE_FD`.
    ///
    /// # Safety
    /// 1. `device` is live, Vulkan 1.2 with timeline semaphores enabled, and outlives the
    ///    returned value.
    pub unsafe fn new(device: &ash::Device) -> Result<Self, WgpuError> {
        let mut kind = vk::SemaphoreTypeCreateInfo::default()
            .semaphore_type(vk::SemaphoreType::TIMELINE)
            .initial_value(0);
        let mut export = vk::ExportSemaphoreCreateInfo::default()
            .handle_types(vk::ExternalSemaphoreHandleTypeFlags::OPAQUE_FD);
        let info = vk::SemaphoreCreateInfo::default()
            .push_next(&mut kind)
            .push_next(&mut export);
        // SAFETY: (1); a valid create info whose chain outlives the call.
        let raw = unsafe { device.create_semaphore(&info, None) }.map_err(vk_error(
            "vkCreateSemaphore",
            "the device may be out of memory",
        ))?;
        Ok(Self {
            device: DeviceFns(device.clone()),
            raw,
        })
    }

    /// A new `OPAQUE_FD` of the semaphore, owned by the caller.
    ///
    /// # Safety
    /// 1. `fd_device` was loaded for this semaphore's device, with `VK_KHR_external_semaphore_fd`
    ///    enabled.
    pub unsafe fn export_fd(
        &self,
        fd_device: &ash::khr::external_semaphore_fd::Device,
    ) -> Result<OwnedFd, WgpuError> {
        let info = vk::SemaphoreGetFdInfoKHR::default()
            .semaphore(self.raw)
            .handle_type(vk::ExternalSemaphoreHandleTypeFlags::OPAQUE_FD);
        // SAFETY: (1); the semaphore was created exportable as OPAQUE_FD.
        let exported = unsafe { fd_device.get_semaphore_fd(&info) };
        // SAFETY: the export's result, just returned.
        unsafe { exported_fd("vkGetSemaphoreFdKHR", exported) }
    }
}

impl Drop for VkTimeline {
    fn drop(&mut self) {
        // SAFETY: the type's invariant; destroyed once.
        unsafe { self.device.destroy_semaphore(self.raw, None) };
    }
}

/// CUDA's import of the semaphore, destroyed on drop (its error recorded on the context).
///
/// Invariant: dropped only when no CUDA work waits on or signals it, and before the Vulkan
/// semaphore it was imported from.
#[derive(Debug)]
pub(super) struct CudaTimeline {
    ctx: Arc<Context>,
    pub raw: sys::CUexternalSemaphore,
}

impl CudaTimeline {
    /// Imports `fd` (taken on success, closed on failure).
    ///
    /// # Errors
    /// The driver's error from binding the context or `cuImportExternalSemaphore`.
    pub fn import(ctx: &Arc<Context>, fd: OwnedFd) -> Result<Self> {
        ctx.bind()?;
        // SAFETY: the descriptor was exported from a Vulkan timeline semaphore (`VkTimeline`);
        // the context is current.
        let raw = unsafe { result::external::import_timeline_semaphore_fd(fd) }?;
        Ok(Self {
            ctx: ctx.clone(),
            raw,
        })
    }
}

impl Drop for CudaTimeline {
    fn drop(&mut self) {
        let raw = self.raw;
        self.ctx.release_in_drop(
            "destroy an imported semaphore",
            "cuDestroyExternalSemaphore",
            // SAFETY: the type's invariant; destroyed once.
            || unsafe { result::external::destroy_semaphore(raw) },
        );
    }
}
