//! The plain-call route's Vulkan side, made with ash alone on wgpu's device: the shared image on
//! a dedicated allocation exportable as an `OPAQUE_FD`, the exportable timeline semaphore, the
//! 1x1 sink the use copies into, and the command buffer of the use (see `plain.rs` for the
//! route and for why each barrier is there or not). Its image helpers (the create info, the
//! exportable memory, its export, the driver's limit) also make `gyroflow.rs`'s linear image.

use anyhow::{Context as _, Result, bail, ensure};
use ash::vk;
use std::os::fd::{FromRawFd as _, OwnedFd};
use std::time::Duration;

/// The image's usage: `SharedTexture`'s image's (`cuda-gl/src/wgpu_interop/vk_image.rs`), so
/// that both routes write and read the same kind of image (a driver may lay out or compress an
/// image by its usage). `STORAGE` is what CUDA's surface load/store asks for.
const IMAGE_USAGE: vk::ImageUsageFlags = vk::ImageUsageFlags::from_raw(
    vk::ImageUsageFlags::SAMPLED.as_raw()
        | vk::ImageUsageFlags::TRANSFER_SRC.as_raw()
        | vk::ImageUsageFlags::TRANSFER_DST.as_raw()
        | vk::ImageUsageFlags::STORAGE.as_raw(),
);
/// RGBA8, as every row of the group.
const FORMAT: vk::Format = vk::Format::R8G8B8A8_UNORM;
/// The layout the image is in for good, from the set-up on: CUDA knows no layouts, and every
/// access of either API is allowed in it (`vkCmdCopyImage` takes a `GENERAL` source).
pub const IMAGE_LAYOUT: vk::ImageLayout = vk::ImageLayout::GENERAL;
/// The longest wait for the route's work: the set-up's, each frame's, and before the teardown.
pub const WAIT_LIMIT: Duration = Duration::from_secs(10);
/// The stage of the use: the semaphore wait and the barriers name it alone.
pub const USE_STAGE: vk::PipelineStageFlags = vk::PipelineStageFlags::TRANSFER;

/// What [`VkObjects::new`] needs of wgpu's device, read through `wgpu::Device::as_hal`.
pub struct Raw<'a> {
    pub instance: &'a ash::Instance,
    pub physical: vk::PhysicalDevice,
    pub device: ash::Device,
    pub queue: vk::Queue,
    pub family: u32,
}

/// The route's Vulkan objects, destroyed on drop (null handles, of a set-up that failed half
/// way, are skipped by Vulkan).
///
/// Invariant: dropped only once no submitted work uses them (the route waits for that first,
/// or leaks them).
pub struct VkObjects {
    device: ash::Device,
    queue: vk::Queue,
    family: u32,
    pub image: vk::Image,
    memory: vk::DeviceMemory,
    /// The image's allocation size (`VkMemoryRequirements::size`), which CUDA's import is told.
    pub bytes: u64,
    sink: vk::Image,
    sink_memory: vk::DeviceMemory,
    pub semaphore: vk::Semaphore,
    pool: vk::CommandPool,
    cmd: vk::CommandBuffer,
}

/// A whole one-level color image in `IMAGE_LAYOUT`-style barriers.
fn color_barrier(image: vk::Image) -> vk::ImageMemoryBarrier<'static> {
    vk::ImageMemoryBarrier::default()
        .image(image)
        .subresource_range(vk::ImageSubresourceRange {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            base_mip_level: 0,
            level_count: 1,
            base_array_layer: 0,
            layer_count: 1,
        })
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
}

/// A `size` 2D RGBA8 image create info with `usage` and `tiling`, in layout `UNDEFINED`.
pub fn image_info(
    usage: vk::ImageUsageFlags,
    tiling: vk::ImageTiling,
    (width, height): (u32, u32),
) -> vk::ImageCreateInfo<'static> {
    vk::ImageCreateInfo::default()
        .image_type(vk::ImageType::TYPE_2D)
        .format(FORMAT)
        .extent(vk::Extent3D {
            width,
            height,
            depth: 1,
        })
        .mip_levels(1)
        .array_layers(1)
        .samples(vk::SampleCountFlags::TYPE_1)
        .tiling(tiling)
        .usage(usage)
        .sharing_mode(vk::SharingMode::EXCLUSIVE)
        .initial_layout(vk::ImageLayout::UNDEFINED)
}

impl VkObjects {
    /// The objects of a `size` route on `raw`'s device, the image in `GENERAL` and the sink in
    /// `TRANSFER_DST_OPTIMAL` (one submit, waited for), the semaphore at 1.
    ///
    /// # Safety
    /// 1. `raw` is wgpu's device (open_device's: Vulkan 1.2 with timeline semaphores,
    ///    `VK_KHR_external_memory_fd` and `VK_KHR_external_semaphore_fd` enabled), its queue
    ///    and its family; the device outlives the value.
    /// 2. The queue is used by no other thread during this call.
    pub unsafe fn new(raw: Raw<'_>, size: (u32, u32)) -> Result<VkObjects> {
        let Raw {
            instance,
            physical,
            device,
            queue,
            family,
        } = raw;
        let optimal = vk::ImageTiling::OPTIMAL;
        // SAFETY: (1): a physical device of this instance, Vulkan 1.2.
        let max = unsafe { exportable_extent(instance, physical, optimal, IMAGE_USAGE) }?;
        ensure!(
            size.0 <= max.width && size.1 <= max.height,
            "the driver exports RGBA8 images of at most {}x{}, not {}x{}",
            max.width,
            max.height,
            size.0,
            size.1
        );
        let mut this = VkObjects {
            device,
            queue,
            family,
            image: vk::Image::null(),
            memory: vk::DeviceMemory::null(),
            bytes: 0,
            sink: vk::Image::null(),
            sink_memory: vk::DeviceMemory::null(),
            semaphore: vk::Semaphore::null(),
            pool: vk::CommandPool::null(),
            cmd: vk::CommandBuffer::null(),
        };
        let mut external = vk::ExternalMemoryImageCreateInfo::default()
            .handle_types(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
        let info = image_info(IMAGE_USAGE, optimal, size).push_next(&mut external);
        // SAFETY: (1); a valid create info of an exportable size and usage (checked above).
        this.image = unsafe { this.device.create_image(&info, None) }.context("vkCreateImage")?;
        let (d, image) = (&this.device, this.image);
        // SAFETY: (1); the image is live and has no memory.
        (this.memory, this.bytes) = unsafe { bind_memory(instance, physical, d, image, true) }?;
        let info = image_info(vk::ImageUsageFlags::TRANSFER_DST, optimal, (1, 1));
        // SAFETY: (1); a valid create info.
        this.sink = unsafe { this.device.create_image(&info, None) }.context("vkCreateImage")?;
        let (d, sink) = (&this.device, this.sink);
        // SAFETY: (1); the sink is live and has no memory.
        (this.sink_memory, _) = unsafe { bind_memory(instance, physical, d, sink, false) }?;
        let mut timeline = vk::SemaphoreTypeCreateInfo::default()
            .semaphore_type(vk::SemaphoreType::TIMELINE)
            .initial_value(0);
        let mut export = vk::ExportSemaphoreCreateInfo::default()
            .handle_types(vk::ExternalSemaphoreHandleTypeFlags::OPAQUE_FD);
        let info = vk::SemaphoreCreateInfo::default()
            .push_next(&mut timeline)
            .push_next(&mut export);
        // SAFETY: (1): timeline semaphores, exportable as OPAQUE_FD (open_device checked both).
        this.semaphore = unsafe { this.device.create_semaphore(&info, None) }
            .context("vkCreateSemaphore (timeline, exportable)")?;
        let info = vk::CommandPoolCreateInfo::default().queue_family_index(family);
        // SAFETY: (1); the queue's own family.
        this.pool = unsafe { this.device.create_command_pool(&info, None) }
            .context("vkCreateCommandPool")?;
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(this.pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: (1); one primary buffer of a live pool.
        let cmds = unsafe { this.device.allocate_command_buffers(&info) }
            .context("vkAllocateCommandBuffers")?;
        this.cmd = cmds
            .first()
            .copied()
            .context("vkAllocateCommandBuffers gave none")?;
        let to_general = color_barrier(this.image)
            .old_layout(vk::ImageLayout::UNDEFINED)
            .new_layout(IMAGE_LAYOUT)
            .dst_access_mask(vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE);
        let sink = color_barrier(this.sink)
            .old_layout(vk::ImageLayout::UNDEFINED)
            .new_layout(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
            .dst_access_mask(vk::AccessFlags::TRANSFER_WRITE);
        let commands = |d: &ash::Device, cmd| {
            // SAFETY: a recording buffer; both images are live and the barriers name their only
            // subresource, in the layout they are in.
            unsafe {
                d.cmd_pipeline_barrier(
                    cmd,
                    vk::PipelineStageFlags::TOP_OF_PIPE,
                    vk::PipelineStageFlags::ALL_COMMANDS,
                    vk::DependencyFlags::empty(),
                    &[],
                    &[],
                    &[to_general, sink],
                );
            }
        };
        // SAFETY: the buffer was just allocated and is in no submit.
        unsafe { this.record(commands) }?;
        // SAFETY: (2); the buffer is recorded; nothing waits, 1 is above the initial 0.
        unsafe { this.submit(None, 1) }?;
        if let Err(e) = this.wait(1, WAIT_LIMIT) {
            // The submit may still run: its objects are leaked rather than destroyed under it.
            std::mem::forget(this);
            return Err(e);
        }
        Ok(this)
    }

    /// A new `OPAQUE_FD` of the image's memory (CUDA's import takes it).
    ///
    /// # Safety
    /// 1. `instance` is the device's.
    pub unsafe fn memory_fd(&self, instance: &ash::Instance) -> Result<OwnedFd> {
        // SAFETY: (1); the memory is the device's, allocated exportable (`new`).
        unsafe { memory_fd(instance, &self.device, self.memory) }
    }

    /// A new `OPAQUE_FD` of the semaphore (CUDA's import takes it).
    ///
    /// # Safety
    /// 1. `instance` is the device's.
    pub unsafe fn semaphore_fd(&self, instance: &ash::Instance) -> Result<OwnedFd> {
        let fns = ash::khr::external_semaphore_fd::Device::new(instance, &self.device);
        let info = vk::SemaphoreGetFdInfoKHR::default()
            .semaphore(self.semaphore)
            .handle_type(vk::ExternalSemaphoreHandleTypeFlags::OPAQUE_FD);
        // SAFETY: (1), the extension is enabled (open_device); the semaphore was created
        // exportable as OPAQUE_FD.
        owned_fd("vkGetSemaphoreFdKHR", unsafe {
            fns.get_semaphore_fd(&info)
        })
    }

    /// Records the command buffer anew with `commands` (the pool reset first).
    ///
    /// # Safety
    /// 1. No submit of the buffer is pending (each is waited for before the next recording).
    unsafe fn record(&self, commands: impl FnOnce(&ash::Device, vk::CommandBuffer)) -> Result<()> {
        let d = &self.device;
        // SAFETY: (1): the pool's one buffer is in no pending submit.
        unsafe { d.reset_command_pool(self.pool, vk::CommandPoolResetFlags::empty()) }
            .context("vkResetCommandPool")?;
        let begin = vk::CommandBufferBeginInfo::default()
            .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        // SAFETY: a reset buffer of this device.
        unsafe { d.begin_command_buffer(self.cmd, &begin) }.context("vkBeginCommandBuffer")?;
        commands(d, self.cmd);
        // SAFETY: the buffer is recording.
        unsafe { d.end_command_buffer(self.cmd) }.context("vkEndCommandBuffer")
    }

    /// Records the frame's use into the route's command buffer (see
    /// [`use_commands`](Self::use_commands)).
    ///
    /// # Safety
    /// As [`record`](Self::record).
    pub unsafe fn record_use(&self, release: bool) -> Result<()> {
        // SAFETY: (1).
        unsafe { self.record(self.use_commands(release)) }
    }

    /// Records the frame's use, acquire only, into `cmd` (wgpu's command buffer, for the row
    /// through wgpu: the same commands as [`record_use`](Self::record_use)'s).
    ///
    /// # Safety
    /// 1. `cmd` is a command buffer of this device in the recording state, on the queue's
    ///    family, submitted (if at all) only after every earlier submit of the route is done.
    pub unsafe fn record_use_into(&self, cmd: vk::CommandBuffer) {
        // The closure's own blocks ask for a recording buffer of this device: (1).
        (self.use_commands(false))(&self.device, cmd);
    }

    /// The frame's use: the acquire of the image from `VK_QUEUE_FAMILY_EXTERNAL`, the copy of
    /// one texel into the sink, and with `release`, the release of the image back to
    /// `VK_QUEUE_FAMILY_EXTERNAL`. The image stays in [`IMAGE_LAYOUT`]. The commands are
    /// recorded into a buffer that their caller keeps in the recording state.
    fn use_commands(&self, release: bool) -> impl FnOnce(&ash::Device, vk::CommandBuffer) {
        let external = |b: vk::ImageMemoryBarrier<'static>| {
            b.old_layout(IMAGE_LAYOUT).new_layout(IMAGE_LAYOUT)
        };
        // The acquire: its first scope chains with the semaphore wait (same stage); the access
        // it makes visible is the copy's read. (An acquire's source access is ignored.)
        let acquire = external(color_barrier(self.image))
            .src_queue_family_index(vk::QUEUE_FAMILY_EXTERNAL)
            .dst_queue_family_index(self.family)
            .dst_access_mask(vk::AccessFlags::TRANSFER_READ);
        // The release: the copy only read the image, so no write is made available; the
        // semaphore signal after it orders CUDA's next write after the read.
        let back = external(color_barrier(self.image))
            .src_queue_family_index(self.family)
            .dst_queue_family_index(vk::QUEUE_FAMILY_EXTERNAL);
        let layer = vk::ImageSubresourceLayers {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            mip_level: 0,
            base_array_layer: 0,
            layer_count: 1,
        };
        let texel = vk::ImageCopy {
            src_subresource: layer,
            src_offset: vk::Offset3D::default(),
            dst_subresource: layer,
            dst_offset: vk::Offset3D::default(),
            extent: vk::Extent3D {
                width: 1,
                height: 1,
                depth: 1,
            },
        };
        let (image, sink) = (self.image, self.sink);
        move |d: &ash::Device, cmd| {
            let none = vk::DependencyFlags::empty();
            // SAFETY: a recording buffer of this device; the images are live, in the layouts
            // named (the image in `IMAGE_LAYOUT` since the set-up, the sink in
            // TRANSFER_DST_OPTIMAL), the barriers name the image's only subresource, and the
            // region lies in both images (this holds for the two blocks below too).
            unsafe {
                d.cmd_pipeline_barrier(cmd, USE_STAGE, USE_STAGE, none, &[], &[], &[acquire])
            };
            // SAFETY: see above.
            unsafe {
                d.cmd_copy_image(
                    cmd,
                    image,
                    IMAGE_LAYOUT,
                    sink,
                    vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                    &[texel],
                );
            }
            if release {
                let end = vk::PipelineStageFlags::BOTTOM_OF_PIPE;
                // SAFETY: see above.
                unsafe { d.cmd_pipeline_barrier(cmd, USE_STAGE, end, none, &[], &[], &[back]) };
            }
        }
    }

    /// Submits the recorded buffer on wgpu's queue with `vkQueueSubmit`: after the semaphore
    /// reaches `wait` (when given; at the use's stage), then signalling `signal`.
    ///
    /// # Safety
    /// 1. No other thread uses the queue during the call (Vulkan: host access to a queue is
    ///    externally synchronized).
    /// 2. `signal` is above every value signalled or pending; `wait` is signalled by work
    ///    already queued (CUDA's), or the queue waits forever.
    pub unsafe fn submit(&self, wait: Option<u64>, signal: u64) -> Result<()> {
        let semaphores = [self.semaphore];
        let (waits, signals, stages) = ([wait.unwrap_or(0)], [signal], [USE_STAGE]);
        let n = usize::from(wait.is_some());
        let mut values = vk::TimelineSemaphoreSubmitInfo::default()
            .wait_semaphore_values(&waits[..n])
            .signal_semaphore_values(&signals);
        let cmds = [self.cmd];
        let info = vk::SubmitInfo::default()
            .wait_semaphores(&semaphores[..n])
            .wait_dst_stage_mask(&stages[..n])
            .command_buffers(&cmds)
            .signal_semaphores(&semaphores)
            .push_next(&mut values);
        // SAFETY: (1), (2); a recorded buffer of this device; the arrays outlive the call.
        unsafe {
            self.device
                .queue_submit(self.queue, &[info], vk::Fence::null())
        }
        .context("vkQueueSubmit")
    }

    /// Waits until the semaphore reaches `value`, at most `limit`.
    pub fn wait(&self, value: u64, limit: Duration) -> Result<()> {
        let (semaphores, values) = ([self.semaphore], [value]);
        let info = vk::SemaphoreWaitInfo::default()
            .semaphores(&semaphores)
            .values(&values);
        let ns = u64::try_from(limit.as_nanos()).unwrap_or(u64::MAX);
        // SAFETY: a live timeline semaphore of this device (Vulkan 1.2); valid arrays.
        match unsafe { self.device.wait_semaphores(&info, ns) } {
            Ok(()) => Ok(()),
            Err(vk::Result::TIMEOUT) => {
                bail!("vkWaitSemaphores: the semaphore did not reach {value} within {limit:?}")
            }
            Err(e) => bail!("vkWaitSemaphores (value {value}): {e}"),
        }
    }
}

impl Drop for VkObjects {
    fn drop(&mut self) {
        let d = &self.device;
        // SAFETY: the type's invariant: no pending work uses any of them; each is destroyed
        // once (null ones are ignored), the images before their memory.
        unsafe {
            d.destroy_command_pool(self.pool, None);
            d.destroy_semaphore(self.semaphore, None);
            d.destroy_image(self.sink, None);
            d.free_memory(self.sink_memory, None);
            d.destroy_image(self.image, None);
            d.free_memory(self.memory, None);
        }
    }
}

/// Allocates device-local memory for `image` and binds it: a dedicated allocation exportable as
/// an `OPAQUE_FD` when `export`. Returns it and its size (which CUDA's import is told).
///
/// # Safety
/// 1. As [`VkObjects::new`] (1) for `device`; `image` is a live image of it with no memory.
pub unsafe fn bind_memory(
    instance: &ash::Instance,
    physical: vk::PhysicalDevice,
    device: &ash::Device,
    image: vk::Image,
    export: bool,
) -> Result<(vk::DeviceMemory, u64)> {
    let mut req = vk::MemoryRequirements2::default();
    let info = vk::ImageMemoryRequirementsInfo2::default().image(image);
    // SAFETY: (1); a Vulkan 1.1 entry point of a 1.2 device; valid structures.
    unsafe { device.get_image_memory_requirements2(&info, &mut req) };
    let req = req.memory_requirements;
    // SAFETY: (1).
    let props = unsafe { instance.get_physical_device_memory_properties(physical) };
    let index = (0..props.memory_type_count)
        .find(|&i| {
            req.memory_type_bits & (1 << i) != 0
                && props.memory_types[i as usize]
                    .property_flags
                    .contains(vk::MemoryPropertyFlags::DEVICE_LOCAL)
        })
        .context("no device-local memory type fits the image")?;
    let mut dedicated = vk::MemoryDedicatedAllocateInfo::default().image(image);
    let mut exported = vk::ExportMemoryAllocateInfo::default()
        .handle_types(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
    let mut alloc = vk::MemoryAllocateInfo::default()
        .allocation_size(req.size)
        .memory_type_index(index);
    if export {
        // Dedicated, as CUDA's import is told (`CUDA_EXTERNAL_MEMORY_DEDICATED`).
        alloc = alloc.push_next(&mut dedicated).push_next(&mut exported);
    }
    // SAFETY: (1); a valid allocate info naming a live image of this device.
    let memory = unsafe { device.allocate_memory(&alloc, None) }.context("vkAllocateMemory")?;
    // SAFETY: the image has no memory; the memory was allocated for it, offset 0.
    if let Err(e) = unsafe { device.bind_image_memory(image, memory, 0) } {
        // SAFETY: bound to nothing, used by nothing.
        unsafe { device.free_memory(memory, None) };
        bail!("vkBindImageMemory: {e}");
    }
    Ok((memory, req.size))
}

/// A new `OPAQUE_FD` of `memory` (CUDA's import takes it).
///
/// # Safety
/// 1. `memory` is a live allocation of `device`, allocated exportable as an `OPAQUE_FD`;
///    `instance` is the device's, and the device has `VK_KHR_external_memory_fd` enabled
///    (open_device's does).
pub unsafe fn memory_fd(
    instance: &ash::Instance,
    device: &ash::Device,
    memory: vk::DeviceMemory,
) -> Result<OwnedFd> {
    let fns = ash::khr::external_memory_fd::Device::new(instance, device);
    let info = vk::MemoryGetFdInfoKHR::default()
        .memory(memory)
        .handle_type(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
    // SAFETY: (1).
    owned_fd("vkGetMemoryFdKHR", unsafe { fns.get_memory_fd(&info) })
}

/// The largest RGBA8 image of `tiling` with `usage` that `physical` exports as an `OPAQUE_FD`;
/// an error when the driver refuses such an image.
///
/// # Safety
/// 1. `physical` is a Vulkan 1.2 physical device of `instance`.
pub unsafe fn exportable_extent(
    instance: &ash::Instance,
    physical: vk::PhysicalDevice,
    tiling: vk::ImageTiling,
    usage: vk::ImageUsageFlags,
) -> Result<vk::Extent3D> {
    let mut external = vk::PhysicalDeviceExternalImageFormatInfo::default()
        .handle_type(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
    let info = vk::PhysicalDeviceImageFormatInfo2::default()
        .format(FORMAT)
        .ty(vk::ImageType::TYPE_2D)
        .tiling(tiling)
        .usage(usage)
        .push_next(&mut external);
    let mut external_props = vk::ExternalImageFormatProperties::default();
    let mut props = vk::ImageFormatProperties2::default().push_next(&mut external_props);
    let call = "vkGetPhysicalDeviceImageFormatProperties2";
    // SAFETY: (1); valid chains that outlive the call.
    unsafe { instance.get_physical_device_image_format_properties2(physical, &info, &mut props) }
        .with_context(|| format!("{call} (an exportable {tiling:?} RGBA8 image)"))?;
    let max = props.image_format_properties.max_extent;
    let features = external_props
        .external_memory_properties
        .external_memory_features;
    ensure!(
        features.contains(vk::ExternalMemoryFeatureFlags::EXPORTABLE),
        "the driver cannot export a {tiling:?} RGBA8 image as an OPAQUE_FD"
    );
    Ok(max)
}

/// The descriptor an export returned, owned.
fn owned_fd(call: &str, exported: ash::prelude::VkResult<i32>) -> Result<OwnedFd> {
    let fd = exported.with_context(|| call.to_owned())?;
    ensure!(fd >= 0, "{call} returned descriptor {fd}");
    // SAFETY: a fresh descriptor that the export handed to the caller, owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}
