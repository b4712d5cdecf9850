//! The Vulkan side of a shared texture's storage: an optimal-tiling 2D image on its own
//! (dedicated) allocation of exportable memory, and the `OPAQUE_FD` export of that memory.

use super::WgpuError;
use super::format::SharedFormat;
use super::vk_info::{DeviceFns, exported_fd, vk_error};
use ash::vk;
use std::os::fd::OwnedFd;

/// The Vulkan usage of the image: sampled by wgpu, a copy source and destination
/// (`TextureUsages::TEXTURE_BINDING | COPY_SRC | COPY_DST`), and storage, because CUDA maps it
/// with `CUDA_ARRAY3D_SURFACE_LDST` for `surf2Dwrite`, which the CUDA programming guide pairs
/// with `VK_IMAGE_USAGE_STORAGE_BIT` (wgpu-hal restricts each view's usage to what wgpu asks
/// for, with `VkImageViewUsageCreateInfo`, so the extra usage never reaches wgpu). No
/// color-attachment usage, which CUDA would have to be told of (`CUDA_ARRAY3D_COLOR_ATTACHMENT`).
pub(super) const IMAGE_USAGE: vk::ImageUsageFlags = vk::ImageUsageFlags::from_raw(
    vk::ImageUsageFlags::SAMPLED.as_raw()
        | vk::ImageUsageFlags::TRANSFER_SRC.as_raw()
        | vk::ImageUsageFlags::TRANSFER_DST.as_raw()
        | vk::ImageUsageFlags::STORAGE.as_raw(),
);

/// An image and its dedicated, exportable memory, destroyed together on drop (image first, then
/// the memory, as Vulkan requires of memory bound to a live image).
///
/// Invariant: it is dropped only when no GPU work uses the image: on an error path of the
/// texture's construction (nothing was submitted yet), or with the rest of a shared texture's
/// resources once wgpu and CUDA are done with them (see `texture.rs`).
#[derive(Debug)]
pub(super) struct VkImageMemory {
    device: DeviceFns,
    pub image: vk::Image,
    memory: vk::DeviceMemory,
    /// `VkMemoryRequirements::size`: the allocation's size, which CUDA's import is told.
    pub size: u64,
}

const HELP_MEMORY: &str = "the GPU may be out of memory: free some, or use a smaller texture";

impl VkImageMemory {
    /// Creates a `width` x `height` image of `format` with [`IMAGE_USAGE`], in layout
    /// `UNDEFINED`, on a dedicated allocation of device-local memory that can be exported as an
    /// `OPAQUE_FD`.
    ///
    /// # Safety
    /// 1. `device` is a live device of physical device `phd` of `instance`, with
    ///    `VK_KHR_external_memory_fd` enabled, and outlives the returned value.
    /// 2. The format and size were checked exportable and within the driver's limits.
    pub unsafe fn new(
        instance: &ash::Instance,
        phd: vk::PhysicalDevice,
        device: &ash::Device,
        format: SharedFormat,
        (width, height): (u32, u32),
    ) -> Result<Self, WgpuError> {
        let mut external = vk::ExternalMemoryImageCreateInfo::default()
            .handle_types(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
        let info = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(format.vk())
            .extent(vk::Extent3D {
                width,
                height,
                depth: 1,
            })
            .mip_levels(1)
            .array_layers(1)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(IMAGE_USAGE)
            .sharing_mode(vk::SharingMode::EXCLUSIVE)
            .initial_layout(vk::ImageLayout::UNDEFINED)
            .push_next(&mut external);
        // SAFETY: (1), (2): a valid create info whose chain outlives the call.
        let image = unsafe { device.create_image(&info, None) }
            .map_err(vk_error("vkCreateImage", HELP_MEMORY))?;
        // From here on, `destroy` on error releases what exists.
        let mut this = Self {
            device: DeviceFns(device.clone()),
            image,
            memory: vk::DeviceMemory::null(),
            size: 0,
        };
        // SAFETY: (1); the image is live.
        unsafe { this.allocate_and_bind(instance, phd) }?;
        Ok(this)
    }

    /// Allocates the image's dedicated exportable memory and binds it.
    ///
    /// # Safety
    /// As [`VkImageMemory::new`] (1); `self.image` is live and has no memory bound.
    unsafe fn allocate_and_bind(
        &mut self,
        instance: &ash::Instance,
        phd: vk::PhysicalDevice,
    ) -> Result<(), WgpuError> {
        let mut dedicated_req = vk::MemoryDedicatedRequirements::default();
        let mut req = vk::MemoryRequirements2::default().push_next(&mut dedicated_req);
        let req_info = vk::ImageMemoryRequirementsInfo2::default().image(self.image);
        // SAFETY: a Vulkan 1.1 entry point of a 1.2 device (checked by `check_device`); valid
        // structures.
        unsafe {
            self.device
                .get_image_memory_requirements2(&req_info, &mut req)
        };
        let req = req.memory_requirements;
        // SAFETY: (1).
        let props = unsafe { instance.get_physical_device_memory_properties(phd) };
        let type_index = (0..props.memory_type_count)
            .find(|&i| {
                req.memory_type_bits & (1 << i) != 0
                    && props.memory_types[i as usize]
                        .property_flags
                        .contains(vk::MemoryPropertyFlags::DEVICE_LOCAL)
            })
            .ok_or(WgpuError::NotExportable {
                call: "vkGetPhysicalDeviceMemoryProperties",
                what: "the image: no device-local memory type fits it".into(),
            })?;
        // A dedicated allocation whether or not the driver prefers one: CUDA's import is told
        // `CUDA_EXTERNAL_MEMORY_DEDICATED`, and the memory holds this image only.
        let mut dedicated = vk::MemoryDedicatedAllocateInfo::default().image(self.image);
        let mut export = vk::ExportMemoryAllocateInfo::default()
            .handle_types(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
        let alloc = vk::MemoryAllocateInfo::default()
            .allocation_size(req.size)
            .memory_type_index(type_index)
            .push_next(&mut dedicated)
            .push_next(&mut export);
        // SAFETY: (1); a valid allocate info naming a live image of this device.
        self.memory = unsafe { self.device.allocate_memory(&alloc, None) }
            .map_err(vk_error("vkAllocateMemory", HELP_MEMORY))?;
        self.size = req.size;
        // SAFETY: the image has no memory bound; the memory was allocated for it, offset 0.
        unsafe { self.device.bind_image_memory(self.image, self.memory, 0) }
            .map_err(vk_error("vkBindImageMemory", HELP_MEMORY))
    }

    /// A new `OPAQUE_FD` of the memory, which the caller owns (CUDA's import takes it).
    ///
    /// # Safety
    /// 1. `fd_device` was loaded for this image's device (with `VK_KHR_external_memory_fd`
    ///    enabled).
    pub unsafe fn export_fd(
        &self,
        fd_device: &ash::khr::external_memory_fd::Device,
    ) -> Result<OwnedFd, WgpuError> {
        let info = vk::MemoryGetFdInfoKHR::default()
            .memory(self.memory)
            .handle_type(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
        // SAFETY: (1); the memory was allocated exportable as OPAQUE_FD.
        let exported = unsafe { fd_device.get_memory_fd(&info) };
        // SAFETY: the export's result, just returned.
        unsafe { exported_fd("vkGetMemoryFdKHR", exported) }
    }
}

impl Drop for VkImageMemory {
    fn drop(&mut self) {
        // SAFETY: the type's invariant: no GPU work uses the image or the memory any more, and
        // the device is live; each handle is destroyed once (null handles are ignored).
        unsafe {
            self.device.destroy_image(self.image, None);
            self.device.free_memory(self.memory, None);
        }
    }
}
