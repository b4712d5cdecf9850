//! gyroflow's way (feature `wgpu`), for reading: the route by which gyroflow (a video
//! stabilizer written in Rust) hands CUDA's frames to wgpu, made of ash and CUDA driver calls on
//! `open_device`'s device, with the same plasma kernel, the same wgpu use and the same wait as
//! every row of the group.
//!
//! Set-up, with `plain_vk.rs`'s helpers: a LINEAR-tiling RGBA8 image, usage
//! `SAMPLED | TRANSFER_SRC | TRANSFER_DST` (no storage: CUDA writes it as plain memory, not
//! through a surface), on a dedicated allocation exportable as an `OPAQUE_FD`. CUDA imports the
//! memory (`cuImportExternalMemory`) and maps all of it as a buffer
//! (`cuExternalMemoryGetMappedBuffer`): pitched device memory, whose rows lie where
//! `vkGetImageSubresourceLayout` says. The image becomes a wgpu texture through
//! `texture_from_raw` and `create_texture_from_hal`, as gyroflow wraps its images. (gyroflow's
//! own code, `src/core/gpu/wgpu_interop_cuda.rs`, lets either side allocate: on Linux CUDA's
//! `cuMemCreate`, exported to a Vulkan image; on Windows a D3D12 resource, imported into CUDA
//! with `cuExternalMemoryGetMappedBuffer`. Which side allocates costs nothing per frame; this
//! row lets Vulkan allocate, as issue 43 describes the route.)
//!
//! Each frame: the plasma kernel that the floor runs (`plasma_pbo`) writes the frame through
//! CUDA's pointer into the image's memory; `cuStreamSynchronize` (gyroflow calls
//! `cuCtxSynchronize`: with the bench stream the only one with work, both wait for the same
//! kernel); then the wgpu use of the image's texture. No semaphore and no barrier of its own:
//! the CPU's wait orders CUDA's write before wgpu's submit, and the use's wait orders wgpu's
//! read before the next kernel. Against the floor, the row differs only by where the kernel
//! writes (imported memory, not `cuMemAlloc`'s) and what the use reads (that LINEAR image, not
//! an untouched optimal texture).
//!
//! What it leaves to the driver, as gyroflow does: the Vulkan spec defines contents that
//! another API wrote only after an acquire from `VK_QUEUE_FAMILY_EXTERNAL`, which this route
//! never records, and wgpu keeps the image in the layout of its first use (moved there from
//! `UNDEFINED`) while CUDA writes it. The row measures what the route costs, not what it
//! shows.
//!
//! Where the driver refuses a LINEAR exportable RGBA8 image of the frame's size, lays a row out
//! wider than the frame's (the kernel writes packed rows), or the set-up fails otherwise, the
//! row prints why and measures nothing (`rows.rs`).
//!
//! Teardown: wgpu destroys the texture once every submit that used it is done, and its drop
//! callback then drops CUDA's mapping and import, then the image and its memory (`Held`). The
//! route drops the texture only once the bench stream and the device are idle, else leaks it
//! (and with it the image, the memory and CUDA's mapping), as the plain route does.

use super::plain::{destroy_dedicated, import_dedicated, stream_idle, teardown_report};
use super::plain_vk::{WAIT_LIMIT, bind_memory, exportable_extent, image_info, memory_fd};
use crate::gpu::{Gpu, RawOut, cu};
use crate::wgpu_present::Wgpu;
use crate::wgpu_present::wgpu_texture::texture_2d_desc;
use anyhow::{Context as _, Result, ensure};
use ash::vk;
use cuda_gl::{Context, sys};
use std::mem::ManuallyDrop;
use std::os::fd::OwnedFd;
use std::sync::Arc;
use wgpu::hal::api::Vulkan;

/// The route in its teardown's messages.
const ROUTE: &str = "gyroflow's way";

/// The image's usage: what wgpu's texture asks (`TEXTURE_BINDING | COPY_SRC | COPY_DST`, as
/// `SharedTexture`'s), nothing for CUDA, which writes the memory as a buffer.
const IMAGE_USAGE: vk::ImageUsageFlags = vk::ImageUsageFlags::from_raw(
    vk::ImageUsageFlags::SAMPLED.as_raw()
        | vk::ImageUsageFlags::TRANSFER_SRC.as_raw()
        | vk::ImageUsageFlags::TRANSFER_DST.as_raw(),
);

/// CUDA's import of the image's memory and its buffer mapping, destroyed on drop (the mapping's
/// `cuMemFree`, then the import, as the driver asks) with its context bound first.
///
/// Invariant: dropped only once no CUDA work uses the mapping, and before the Vulkan memory it
/// was imported from is freed.
struct CudaBuffer {
    ctx: Arc<Context>,
    memory: sys::CUexternalMemory,
    /// The mapping's base: the start of the allocation.
    ptr: sys::CUdeviceptr,
}

impl CudaBuffer {
    /// Imports `fd` (an `OPAQUE_FD` of a dedicated allocation of `bytes` bytes) into `ctx` and
    /// maps all of it as a buffer.
    ///
    /// # Safety
    /// 1. `fd` is the export of a dedicated Vulkan allocation of `bytes` bytes on the CUDA GPU,
    ///    which outlives the value; `ctx` is current.
    unsafe fn import(
        ctx: &Arc<Context>,
        driver: &sys::Driver,
        fd: OwnedFd,
        bytes: u64,
    ) -> Result<CudaBuffer> {
        let mut this = CudaBuffer {
            ctx: ctx.clone(),
            memory: std::ptr::null_mut(),
            ptr: 0,
        };
        // SAFETY: (1): the export of a dedicated allocation of `bytes` bytes.
        this.memory = unsafe { import_dedicated(driver, fd, bytes) }?;
        let buffer = sys::CUDA_EXTERNAL_MEMORY_BUFFER_DESC {
            offset: 0,
            size: bytes,
            ..Default::default()
        };
        // SAFETY: a live import of `bytes` bytes, mapped whole; valid pointers.
        cu("cuExternalMemoryGetMappedBuffer", unsafe {
            driver.cuExternalMemoryGetMappedBuffer(&mut this.ptr, this.memory, &buffer)
        })?;
        Ok(this)
    }
}

impl Drop for CudaBuffer {
    fn drop(&mut self) {
        let Ok(driver) = sys::driver() else { return };
        // The drop may run in wgpu's drop callback: the context is bound here. Without it the
        // import is leaked; CUDA's reference keeps the memory, which Vulkan may free.
        if let Err(e) = self.ctx.bind() {
            eprintln!("interop: wgpu present: gyroflow's way's CUDA import is leaked: {e}");
            return;
        }
        // The type's invariant: no CUDA work uses them any more. Each handle made by `import`
        // is destroyed once, the mapping before the import; one that failed left 0 or null.
        if self.ptr != 0 {
            // SAFETY: see above; a pointer of `cuExternalMemoryGetMappedBuffer`, which the
            // driver asks be freed with `cuMemFree`.
            let rc = unsafe { driver.cuMemFree_v2(self.ptr) };
            teardown_report(ROUTE, "cuMemFree", rc);
        }
        // SAFETY: see above; the buffer mapped from it is freed.
        unsafe { destroy_dedicated(driver, self.memory, ROUTE) };
    }
}

/// The linear image and its memory, destroyed on drop (the image, then the memory; null handles,
/// of a set-up that failed half way, are skipped by Vulkan).
///
/// Invariant: dropped only once no Vulkan work uses the image, and after CUDA's import of the
/// memory is destroyed.
struct LinearImage {
    device: ash::Device,
    image: vk::Image,
    memory: vk::DeviceMemory,
}

impl Drop for LinearImage {
    fn drop(&mut self) {
        // SAFETY: the type's invariant; the device is live (wgpu's, whose clones the route and
        // wgpu's texture hold until this has run); each handle is destroyed once.
        unsafe {
            self.device.destroy_image(self.image, None);
            self.device.free_memory(self.memory, None);
        }
    }
}

/// What the texture's drop callback holds until wgpu destroys the texture: CUDA's side first
/// (fields drop in order), then the image and its memory.
struct Held {
    _cuda: CudaBuffer,
    _vk: LinearImage,
}

// SAFETY: the CUDA handles are process-wide values usable from any thread once their context is
// bound (the drop binds it), and the Vulkan ones are plain handles with an `ash::Device` (itself
// `Send + Sync`); nothing is mutated through a shared reference. wgpu may run the callback on any
// thread that drops or polls the device.
unsafe impl Send for Held {}
// SAFETY: as for `Send`.
unsafe impl Sync for Held {}

/// gyroflow's route at one size, on the device it was made on and the bench stream.
pub struct GyroflowRoute {
    /// The image as a wgpu texture; its drop callback holds [`Held`]. Leaked when the route's
    /// work did not end (see `Drop`).
    texture: ManuallyDrop<wgpu::Texture>,
    /// Level 0's first texel in CUDA's mapping (the mapping's base + the layout's offset).
    first_texel: sys::CUdeviceptr,
    size: (u32, u32),
    ctx: Arc<Context>,
    driver: &'static sys::Driver,
    /// The bench stream's handle, which outlives the route (`Gpu` outlives the group's rigs).
    stream: sys::CUstream,
    /// The device of the texture, whose submits the teardown waits for.
    device: wgpu::Device,
}

impl GyroflowRoute {
    /// The route at `size` on `w`'s device (open_device's) and `gpu`'s context and stream.
    ///
    /// # Errors
    /// When the driver refuses a LINEAR exportable RGBA8 image of `size`, or lays its rows out
    /// with padding; the driver's errors from making it and from CUDA's import.
    pub fn new(gpu: &Gpu, w: &Wgpu, size: (u32, u32)) -> Result<GyroflowRoute> {
        let (width, height) = size;
        let driver = sys::driver()?;
        gpu.ctx.bind().context("binding the CUDA context")?;
        let device = w.device();
        // SAFETY: the guard is only read (raw handles cloned, the texture wrapped) and dropped
        // before the texture is made from the image; the objects the route makes on the device
        // are destroyed while it lives (`LinearImage`).
        let hal =
            unsafe { device.as_hal::<Vulkan>() }.context("the wgpu device is not on Vulkan")?;
        let instance = hal.shared_instance().raw_instance();
        let (physical, ash) = (hal.raw_physical_device(), hal.raw_device().clone());
        let linear = vk::ImageTiling::LINEAR;
        // SAFETY: open_device's device's physical device, Vulkan 1.2 (checked by open_device).
        let max = unsafe { exportable_extent(instance, physical, linear, IMAGE_USAGE) }?;
        ensure!(
            width <= max.width && height <= max.height,
            "the driver exports LINEAR RGBA8 images of at most {}x{}",
            max.width,
            max.height
        );
        let mut external = vk::ExternalMemoryImageCreateInfo::default()
            .handle_types(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
        let info = image_info(IMAGE_USAGE, linear, size).push_next(&mut external);
        // Dropped after `cuda` below on an error (locals drop in reverse order).
        let mut vk_image = LinearImage {
            device: ash.clone(),
            image: vk::Image::null(),
            memory: vk::DeviceMemory::null(),
        };
        // SAFETY: a valid create info of an exportable size, tiling and usage (checked above).
        vk_image.image =
            unsafe { ash.create_image(&info, None) }.context("vkCreateImage (LINEAR)")?;
        // SAFETY: open_device's device (Vulkan 1.2, VK_KHR_external_memory_fd enabled); the
        // image is live and has no memory.
        let (memory, bytes) =
            unsafe { bind_memory(instance, physical, &ash, vk_image.image, true) }?;
        vk_image.memory = memory;
        let level0 = vk::ImageSubresource {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            mip_level: 0,
            array_layer: 0,
        };
        // SAFETY: a live LINEAR image of this device, and a subresource it has.
        let layout = unsafe { ash.get_image_subresource_layout(vk_image.image, level0) };
        let row = u64::from(width) * 4;
        ensure!(
            layout.row_pitch == row,
            "the driver lays a {width}-texel row of a LINEAR RGBA8 image out in {} bytes, not \
             {row}: the plasma kernel writes packed rows",
            layout.row_pitch
        );
        ensure!(
            layout.offset + row * u64::from(height) <= bytes,
            "the image's level 0 ({} bytes at {}) overruns its {bytes}-byte allocation",
            row * u64::from(height),
            layout.offset
        );
        // SAFETY: the device's memory, allocated exportable; the device's instance; the
        // extension is enabled (open_device).
        let fd = unsafe { memory_fd(instance, &ash, vk_image.memory) }?;
        // SAFETY: `fd` is the export of the image's dedicated allocation of `bytes` bytes, on the
        // CUDA GPU (open_device's), which `Held` frees only after CUDA's import; the context was
        // bound above.
        let cuda = unsafe { CudaBuffer::import(&gpu.ctx, driver, fd, bytes) }?;
        let first_texel = cuda.ptr + layout.offset;
        let image = vk_image.image;
        let held = Held {
            _cuda: cuda,
            _vk: vk_image,
        };
        let desc = texture_2d_desc(
            size,
            wgpu::TextureFormat::Rgba8Unorm,
            wgpu::TextureUsages::TEXTURE_BINDING
                | wgpu::TextureUsages::COPY_SRC
                | wgpu::TextureUsages::COPY_DST,
            "wgpu present: gyroflow's LINEAR image",
        );
        // The same texture as wgpu-hal sees it.
        let hal_desc = wgpu::hal::TextureDescriptor {
            label: desc.label,
            size: desc.size,
            mip_level_count: desc.mip_level_count,
            sample_count: desc.sample_count,
            dimension: desc.dimension,
            format: desc.format,
            // Exactly the image's usage (`IMAGE_USAGE`).
            usage: wgpu::TextureUses::RESOURCE
                | wgpu::TextureUses::COPY_SRC
                | wgpu::TextureUses::COPY_DST,
            memory_flags: wgpu::hal::MemoryFlags::empty(),
            view_formats: Vec::new(),
        };
        // SAFETY: `texture_from_raw`'s contract: the image was made on this device as
        // `hal_desc` says (2D, one level, one sample, R8G8B8A8_UNORM, which wgpu-hal maps
        // Rgba8Unorm to, the usage wgpu-hal maps `hal_desc.usage` to, no MUTABLE_FORMAT, no view
        // formats), with its memory bound; with a drop callback and `TextureMemory::External`,
        // wgpu-hal destroys neither the image nor the memory, which `held` keeps until the
        // callback runs.
        let hal_texture = unsafe {
            hal.texture_from_raw(
                image,
                &hal_desc,
                Some(Box::new(move || drop(held))),
                wgpu::hal::vulkan::TextureMemory::External,
            )
        };
        drop(hal);
        // SAFETY: `create_texture_from_hal`'s contract: made on this device's wgpu-hal device
        // as `desc` says (its usage maps to `hal_desc`'s), with memory bound; the image is in
        // layout UNDEFINED, which `UNINITIALIZED` stands for.
        let texture = unsafe {
            device.create_texture_from_hal::<Vulkan>(
                hal_texture,
                &desc,
                wgpu::TextureUses::UNINITIALIZED,
            )
        };
        Ok(GyroflowRoute {
            texture: ManuallyDrop::new(texture),
            first_texel,
            size,
            ctx: gpu.ctx.clone(),
            driver,
            stream: gpu.stream.raw(),
            device: device.clone(),
        })
    }

    /// One frame at time `t`: the plasma kernel into the image's memory, the stream's sync, then
    /// the wgpu use of the image's texture into `sink`.
    pub fn frame(&self, gpu: &Gpu, w: &Wgpu, sink: &wgpu::Texture, t: f32) -> Result<()> {
        ensure!(
            gpu.stream.raw() == self.stream,
            "gyroflow's way runs on the stream it was made with"
        );
        // SAFETY: `first_texel` is level 0 of the route's image in CUDA's mapping of its
        // memory, in this context: `size` rows of `size.0 * 4` bytes, packed (checked by `new`),
        // within the mapping; the mapping lives until the texture's teardown, which waits for
        // the stream first. No other API accesses it until the kernel has finished: wgpu's
        // last use of the image was waited for (every `use_texel` waits; one that failed ended
        // the run), and the next is submitted after the synchronize below.
        unsafe { gpu.plasma_into_raw(RawOut::Ptr(self.first_texel), self.size, t) }?;
        gpu.stream.synchronize()?;
        w.use_texel(&self.texture, sink)
    }
}

impl Drop for GyroflowRoute {
    fn drop(&mut self) {
        // Nothing may be destroyed under work that uses it: CUDA's (the stream's, polled) and
        // wgpu's (its last submit, waited for). Past either limit, or with the context
        // unusable, the texture is leaked instead: wgpu then never destroys it, and `Held`
        // (CUDA's mapping, the image, its memory) stays.
        let wgpu_idle = || {
            let all = wgpu::PollType::Wait {
                submission_index: None,
                timeout: Some(WAIT_LIMIT),
            };
            self.device.poll(all).is_ok()
        };
        // SAFETY: the bench stream, live while `Gpu` is (past the route), of the route's
        // context.
        let cuda = unsafe { stream_idle(&self.ctx, self.driver, self.stream) };
        let idle = cuda && wgpu_idle();
        if !idle {
            eprintln!(
                "interop: wgpu present: gyroflow's way's work did not end within {WAIT_LIMIT:?}; \
                 its image and CUDA's mapping are leaked"
            );
            return;
        }
        // SAFETY: dropped once, here, never used after; no work uses the image or the mapping
        // (above). wgpu destroys the texture now or once its submits are done (all are), and
        // the callback then drops `Held`, CUDA's side first.
        unsafe { ManuallyDrop::drop(&mut self.texture) };
    }
}
