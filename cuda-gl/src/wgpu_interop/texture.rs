//! [`SharedTexture`]: a `wgpu::Texture` whose image CUDA writes in place, and [`CudaWrite`], the
//! guard of one write.

use super::cuda_image::CudaImage;
use super::format::SharedFormat;
use super::handoff::Handoff;
use super::timeline::{CudaTimeline, VkTimeline};
use super::vk_image::{IMAGE_USAGE, VkImageMemory};
use super::vk_info::{self, DeviceFns};
use super::{Vulkan, WgpuError};
use crate::context::Context;
use crate::error::{Error, Result, UsageError};
use crate::graphics::Surface;
use crate::result;
use crate::stream::{AsStream, check_same_context, refuse_capturing};
use cuda_gl_sys as sys;
use std::sync::Arc;

/// Everything behind the texture that must die in order: CUDA's objects before the Vulkan ones
/// they were imported from (field order is drop order).
///
/// Held by the [`SharedTexture`] and by the drop callback of wgpu's texture, and released by
/// whichever lets go last: by then wgpu has finished every submit that used the texture
/// (SAFETY 3 and 5 of the module docs) and CUDA every write (each was waited for by an acquire,
/// or the context was synchronized).
#[derive(Debug)]
struct Resources {
    cuda_image: CudaImage,
    cuda_timeline: CudaTimeline,
    vk_timeline: VkTimeline,
    vk_image: VkImageMemory,
}

// SAFETY: the CUDA handles inside are process-wide values usable from any thread once their
// context is bound (each drop binds it), and the Vulkan ones are plain handles with an
// `ash::Device` (itself `Send + Sync`); nothing is mutated through a shared reference.
unsafe impl Send for Resources {}
// SAFETY: as for `Send`.
unsafe impl Sync for Resources {}

/// A `wgpu::Texture` that CUDA kernels write in place, handed between the two on the GPU with a
/// timeline semaphore: no host copy, no CPU wait per frame.
///
/// Made with [`SharedTexture::new`] on a device from [`open_device`](super::open_device) (or
/// one that passes [`check_device`](super::check_device)). Each frame:
///
/// 1. [`SharedTexture::write`] on a CUDA stream: wgpu's uses submitted so far are followed by
///    a hand-off to CUDA, and the stream waits for it on the GPU;
/// 2. a kernel writes through [`CudaWrite::surface`] on that stream;
/// 3. [`CudaWrite::finish`] (or the guard's drop): the stream signals, and wgpu's next submits
///    wait for that signal on the GPU;
/// 4. the application samples or copies [`SharedTexture::texture`] in its own passes.
///
/// Between `write` and `finish` the image belongs to CUDA: a wgpu pass submitted meanwhile reads
/// unspecified contents (the guard borrows the texture mutably, so this needs a clone of the
/// `wgpu::Texture` used from elsewhere). The contents are unspecified until the first write.
///
/// Lifetimes: the texture keeps clones of the wgpu device and queue, and its CUDA and Vulkan
/// objects live until both it and every clone of [`SharedTexture::texture`] are gone and wgpu
/// has finished with them, whatever is dropped first.
#[derive(Debug)]
pub struct SharedTexture {
    texture: wgpu::Texture,
    resources: Arc<Resources>,
    ctx: Arc<Context>,
    format: SharedFormat,
    size: (u32, u32),
    /// The semaphore's last value asked for (by either side).
    value: u64,
    /// A write was begun and never finished (its guard was leaked): the image is CUDA's.
    with_cuda: bool,
    ash: DeviceFns,
    family: u32,
    queue: wgpu::Queue,
    /// Last: the device outlives the Vulkan objects it made, whichever drop releases them.
    device: wgpu::Device,
}

/// The guard of one CUDA write of a [`SharedTexture`]: hands out the surface, and hands the
/// image back to wgpu when finished or dropped.
#[derive(Debug)]
#[must_use = "the write ends when the guard is finished or dropped"]
pub struct CudaWrite<'t, S: AsStream> {
    texture: &'t mut SharedTexture,
    stream: &'t S,
    done: bool,
}

impl SharedTexture {
    /// Creates a `width` x `height` texture of `format` on `device` (usages `TEXTURE_BINDING`,
    /// `COPY_SRC` and `COPY_DST`), backed by a Vulkan image on exportable memory that CUDA
    /// context `ctx` imports, with the timeline semaphore of its hand-offs.
    ///
    /// # Errors
    /// - [`UsageError::ZeroSize`] for a zero width or height, [`UsageError::TooLarge`] beyond
    ///   the device's `max_texture_dimension_2d` or the driver's limit for exportable images;
    /// - what [`check_device`](super::check_device) refuses;
    /// - [`WgpuError::NotExportable`] when the driver cannot export an image of `format`;
    /// - [`WgpuError::Vulkan`] from creating the image, its memory or the semaphore;
    /// - the driver's errors from importing them into CUDA.
    pub fn new(
        ctx: &Arc<Context>,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        (width, height): (u32, u32),
        format: SharedFormat,
    ) -> Result<SharedTexture> {
        check_size(width, height, device.limits().max_texture_dimension_2d)?;
        super::check_device(device, ctx)?;
        // SAFETY: the guard is used to make Vulkan objects on the device (SAFETY 2 and 3) and
        // dropped at the end of this function.
        let hal = unsafe { device.as_hal::<Vulkan>() }.ok_or(WgpuError::NotVulkan {
            call: "cuda_gl::wgpu_interop::SharedTexture::new",
            what: "device",
            backend: format!("{:?}", device.adapter_info().backend),
        })?;
        let instance = hal.shared_instance().raw_instance();
        let (phd, ash) = (
            hal.raw_physical_device(),
            DeviceFns(hal.raw_device().clone()),
        );
        // SAFETY: a physical device of this instance; Vulkan 1.2 (checked by `check_device`).
        let Some(max) = (unsafe { vk_info::image_export(instance, phd, format.vk(), IMAGE_USAGE) })
        else {
            return Err(WgpuError::NotExportable {
                call: "vkGetPhysicalDeviceImageFormatProperties2",
                what: format!("an optimal-tiling {:?} image", format.vk()),
            }
            .into());
        };
        check_size(width, height, max.width.min(max.height))?;
        // SAFETY: the device is live and has VK_KHR_external_memory_fd enabled (checked); it
        // outlives the image (SAFETY 3); format and size were checked above.
        let vk_image = unsafe { VkImageMemory::new(instance, phd, &ash, format, (width, height)) }?;
        let memory_fd = ash::khr::external_memory_fd::Device::new(instance, &ash);
        // SAFETY: loaded for this device, which has the extension enabled.
        let fd = unsafe { vk_image.export_fd(&memory_fd) }?;
        // SAFETY: `fd` is the export of `vk_image`'s dedicated allocation of `vk_image.size`
        // bytes, which outlives `cuda_image` (both end up in `Resources`, CUDA's first).
        let cuda_image =
            unsafe { CudaImage::import(ctx, fd, vk_image.size, format, (width, height)) }?;
        // SAFETY: as for the image; timeline semaphores are enabled (checked).
        let vk_timeline = unsafe { VkTimeline::new(&ash) }?;
        let semaphore_fd = ash::khr::external_semaphore_fd::Device::new(instance, &ash);
        // SAFETY: loaded for this device, which has the extension enabled.
        let cuda_timeline =
            CudaTimeline::import(ctx, unsafe { vk_timeline.export_fd(&semaphore_fd) }?)?;
        let image = vk_image.image;
        let resources = Arc::new(Resources {
            cuda_image,
            cuda_timeline,
            vk_timeline,
            vk_image,
        });
        let family = hal.queue_family_index();
        let wgpu_desc = wgpu::TextureDescriptor {
            label: Some("cuda_gl::wgpu_interop::SharedTexture"),
            size: wgpu::Extent3d {
                width,
                height,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: format.wgpu(),
            usage: wgpu::TextureUsages::TEXTURE_BINDING
                | wgpu::TextureUsages::COPY_SRC
                | wgpu::TextureUsages::COPY_DST,
            view_formats: &[],
        };
        let hal_desc = wgpu::hal::TextureDescriptor {
            label: wgpu_desc.label,
            size: wgpu_desc.size,
            mip_level_count: wgpu_desc.mip_level_count,
            sample_count: wgpu_desc.sample_count,
            dimension: wgpu_desc.dimension,
            format: wgpu_desc.format,
            // Exactly the image's usage (`IMAGE_USAGE`), storage included.
            usage: wgpu::TextureUses::RESOURCE
                | wgpu::TextureUses::COPY_SRC
                | wgpu::TextureUses::COPY_DST
                | wgpu::TextureUses::STORAGE_READ_WRITE,
            memory_flags: wgpu::hal::MemoryFlags::empty(),
            view_formats: Vec::new(),
        };
        let held = resources.clone();
        // SAFETY: SAFETY 3 of the module docs: the image was made on this device as `hal_desc`
        // says (2D, one level, one sample, the format wgpu-hal maps `format.wgpu()` to, the usage
        // wgpu-hal maps `hal_desc.usage` to (a superset of what `wgpu_desc` asks for: storage), no MUTABLE_FORMAT and no view formats); with a drop
        // callback and `TextureMemory::External`, wgpu-hal destroys neither the image nor the
        // memory, which `held` keeps alive until the callback runs.
        let hal_texture = unsafe {
            hal.texture_from_raw(
                image,
                &hal_desc,
                Some(Box::new(move || drop(held))),
                wgpu::hal::vulkan::TextureMemory::External,
            )
        };
        drop(hal);
        // SAFETY: SAFETY 3: made on this device's wgpu-hal device, as `wgpu_desc` says, with
        // memory bound; the image is in layout UNDEFINED, which `UNINITIALIZED` stands for.
        let texture = unsafe {
            device.create_texture_from_hal::<Vulkan>(
                hal_texture,
                &wgpu_desc,
                wgpu::TextureUses::UNINITIALIZED,
            )
        };
        Ok(SharedTexture {
            texture,
            resources,
            ctx: ctx.clone(),
            format,
            size: (width, height),
            value: 0,
            with_cuda: false,
            ash,
            family,
            queue: queue.clone(),
            device: device.clone(),
        })
    }

    /// The wgpu texture, to sample or copy in the application's passes (`Clone` it to keep it).
    pub fn texture(&self) -> &wgpu::Texture {
        &self.texture
    }

    /// Width and height in texels.
    pub fn size(&self) -> (u32, u32) {
        self.size
    }

    /// The texel format.
    pub fn format(&self) -> SharedFormat {
        self.format
    }

    /// The timeline semaphore's last value: two per frame (CUDA's wait, CUDA's signal).
    pub fn timeline_value(&self) -> u64 {
        self.value
    }

    fn handoff(&self) -> Handoff<'_> {
        Handoff {
            device: &self.device,
            queue: &self.queue,
            texture: &self.texture,
            ash: &self.ash,
            family: self.family,
            image: self.resources.vk_image.image,
            semaphore: self.resources.vk_timeline.raw,
        }
    }

    /// Refuses a texture that the application destroyed (`wgpu::Texture::destroy` on a
    /// clone): wgpu would refuse the hand-off's submits.
    fn check_alive(&self) -> Result<()> {
        // SAFETY: the guard is only tested and dropped.
        if unsafe { self.texture.as_hal::<Vulkan>() }.is_some() {
            Ok(())
        } else {
            Err(WgpuError::TextureDestroyed {
                call: "cuda_gl::wgpu_interop::SharedTexture::write",
            }
            .into())
        }
    }

    /// Begins a CUDA write of the texture on `stream`: every wgpu use of the texture submitted
    /// so far is followed by a hand-off to CUDA, and `stream` waits for it on the GPU. Launch
    /// the kernel on `stream` with [`CudaWrite::surface`], then [`CudaWrite::finish`].
    ///
    /// # Errors
    /// [`UsageError::WrongCudaContext`] for a stream of another context;
    /// [`Error::StreamCapturing`] for a stream capturing a graph; the driver's error from
    /// `cuWaitExternalSemaphoresAsync`; [`WgpuError::TextureDestroyed`] when the texture was
    /// destroyed through wgpu.
    pub fn write<'t, S: AsStream>(&'t mut self, stream: &'t S) -> Result<CudaWrite<'t, S>> {
        check_same_context(&self.ctx, stream, "the shared texture")?;
        refuse_capturing(
            &self.ctx,
            stream,
            "cuda_gl::wgpu_interop::SharedTexture::write",
        )?;
        self.check_alive()?;
        if self.with_cuda {
            // A leaked guard: its kernels may still run on a stream that is gone. Wait for the
            // whole context, then hand the image back as a finish would.
            log::warn!("cuda-gl: a CudaWrite was leaked; synchronizing its context to recover");
            self.ctx.bind()?;
            result::ctx::synchronize()?;
            self.give_back(std::ptr::null_mut())?;
        }
        let release = self.value + 1;
        self.handoff().release(release)?;
        self.value = release;
        // SAFETY: the semaphore lives as long as `self.resources`, which outlives the stream's
        // use of it (an acquire waits for the signal that follows this wait in stream order,
        // SAFETY 5); the stream is of this context (checked), and wgpu signals `release`.
        unsafe {
            result::external::wait_semaphore(
                self.resources.cuda_timeline.raw,
                release,
                stream.raw_stream(),
            )
        }?;
        self.with_cuda = true;
        Ok(CudaWrite {
            texture: self,
            stream,
            done: false,
        })
    }

    /// CUDA to wgpu: `stream` signals the next value, wgpu's next submit waits for it.
    fn give_back(&mut self, stream: sys::CUstream) -> Result<()> {
        let signal = self.value + 1;
        self.ctx.bind()?;
        // SAFETY: the semaphore is live (as in `write`); `stream` is of this context, or null
        // (the legacy stream of the bound context).
        unsafe {
            result::external::signal_semaphore(self.resources.cuda_timeline.raw, signal, stream)
        }?;
        self.value = signal;
        // Only once CUDA will signal: a wait for a value nothing signals would hang wgpu's queue.
        self.handoff().acquire(signal)?;
        self.with_cuda = false;
        Ok(())
    }
}

impl Drop for SharedTexture {
    fn drop(&mut self) {
        if self.with_cuda {
            // A leaked guard: wait for CUDA, then hand the image back so that wgpu's later uses
            // (of clones of the texture) are ordered; on failure the error is recorded and the
            // image stays CUDA's (wgpu then reads unspecified contents, nothing worse).
            if self.ctx.bind_for_drop("recover a leaked CudaWrite") {
                let recovered = result::ctx::synchronize()
                    .map_err(Error::from)
                    .and_then(|()| self.give_back(std::ptr::null_mut()));
                if let Err(e) = recovered {
                    self.ctx
                        .record_drop_error("handing a leaked write back to wgpu", e);
                }
            }
        }
    }
}

/// Refuses a zero size or one beyond `max`.
fn check_size(width: u32, height: u32, max: u32) -> Result<()> {
    if width == 0 || height == 0 {
        return Err(UsageError::ZeroSize {
            what: "a shared texture (width or height 0)",
        }
        .into());
    }
    let largest = width.max(height);
    if largest > max {
        return Err(UsageError::TooLarge {
            what: "a shared texture's width or height",
            value: largest.into(),
            max: max.into(),
        }
        .into());
    }
    Ok(())
}

impl<S: AsStream> CudaWrite<'_, S> {
    /// The surface object over the texture, for a kernel taking `cudaSurfaceObject_t` on the
    /// guard's stream (`surf2Dwrite(v, surf, x * bytes_per_texel, y)`).
    pub fn surface(&self) -> Surface<'_> {
        Surface::new(self.texture.resources.cuda_image.surface)
    }

    /// The CUDA array (level 0), for copies on the guard's stream (`cuMemcpy2DAsync`).
    pub fn array(&self) -> sys::CUarray {
        self.texture.resources.cuda_image.array
    }

    /// Width and height in texels.
    pub fn size(&self) -> (u32, u32) {
        self.texture.size
    }

    /// Ends the write: the stream signals once the work queued on it so far is done, and
    /// wgpu's next submits wait for that signal on the GPU.
    ///
    /// # Errors
    /// The driver's error from `cuSignalExternalSemaphoresAsync` (the image then stays CUDA's,
    /// and the next [`SharedTexture::write`] recovers by synchronizing the context).
    pub fn finish(mut self) -> Result<()> {
        self.done = true;
        self.texture.give_back(self.stream.raw_stream())
    }
}

impl<S: AsStream> Drop for CudaWrite<'_, S> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        if let Err(e) = self.texture.give_back(self.stream.raw_stream()) {
            self.texture
                .ctx
                .record_drop_error("finishing a CudaWrite in its drop", e);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_checked_before_any_gpu_call() {
        let zero = |e| matches!(e, Error::Usage(UsageError::ZeroSize { .. }));
        assert!(zero(check_size(0, 10, 100).unwrap_err()));
        assert!(zero(check_size(10, 0, 100).unwrap_err()));
        let big = check_size(101, 10, 100).unwrap_err();
        assert!(
            matches!(big, Error::Usage(UsageError::TooLarge { .. })),
            "{big}"
        );
        assert!(big.to_string().contains("101"), "{big}");
        assert!(check_size(100, 1, 100).is_ok());
    }
}
