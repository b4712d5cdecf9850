//! [`SharedTexture`]: a `wgpu::Texture` whose image CUDA writes in place. `write` holds
//! [`CudaWrite`], the guard of one write; `group` hands several over at once; `recovery` hands
//! the image back; `ahead` releases it to CUDA before its next write.

mod ahead;
mod group;
mod recovery;
mod turn;
mod write;

pub(crate) use recovery::WAIT_FOR_CUDA;
pub use write::CudaWrite;

use super::cuda_image::CudaImage;
use super::format::SharedFormat;
use super::place::texture_descriptor;
use super::timeline::{CudaTimeline, VkTimeline};
use super::vk_image::{IMAGE_USAGE, VkImageMemory};
use super::vk_info::{self, DeviceFns};
use super::{Vulkan, WgpuError};
use crate::context::{Context, drop_when_idle};
use crate::error::{Result, UsageError};
use crate::result;
use crate::stream::{AsStream, Event, check_same_context, refuse_capturing, wait_limit};
use crate::wait::InDrop;
use std::mem::ManuallyDrop;
use std::sync::Arc;
use turn::Turn;

/// Everything behind the texture that must die in order, and the event that says when CUDA is
/// done with it.
///
/// Held by the [`SharedTexture`] and by the drop callback of wgpu's texture, and released by
/// whichever lets go last: by then wgpu has finished every submit that used the texture
/// (SAFETY 3 and 5 of the module docs). CUDA's side is waited for here: `done` is recorded on
/// cuda-gl's private stream after each of CUDA's signals, so it follows every write that was
/// handed back, also one whose acquire wgpu refused (a leaked write is waited for by the shared
/// texture's recovery, which synchronizes the context, or the resources are leaked).
#[derive(Debug)]
struct Resources {
    done: Event,
    /// Dropped only once `done` has completed; leaked when it does not within the [wait
    /// limit](crate::wait_limit) (10 s by default; a kernel that does not end may still write the
    /// image).
    held: ManuallyDrop<Held>,
}

/// The objects themselves: CUDA's before the Vulkan ones they were imported from (field order
/// is drop order).
#[derive(Debug)]
struct Held {
    cuda_image: CudaImage,
    cuda_timeline: CudaTimeline,
    vk_timeline: VkTimeline,
    vk_image: VkImageMemory,
}

// SAFETY: the CUDA handles inside are process-wide values usable from any thread once their
// context is bound (each drop binds it), and the Vulkan ones are plain handles with an
// `ash::Device` (itself `Send + Sync`); nothing is mutated through a shared reference.
unsafe impl Send for Held {}
// SAFETY: as for `Send`.
unsafe impl Sync for Held {}

impl Drop for Resources {
    fn drop(&mut self) {
        let idle = self.done.wait_for(wait_limit());
        // SAFETY: dropped once, here, and never used after; wgpu's work on them is done (the
        // type's docs), and CUDA's is waited for (`idle`).
        unsafe {
            drop_when_idle(
                self.done.context(),
                &mut self.held,
                idle,
                "a shared texture's image and semaphore",
                "cuEventQuery",
            )
        };
    }
}

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
/// Between `write` and `finish` the image belongs to CUDA, in a layout and queue family wgpu
/// does not track: no submit may use the texture then (which is why `write` is `unsafe`; the
/// safe [`WgpuTarget`](super::WgpuTarget) never hands out the image it writes). The contents
/// are unspecified until the first write.
///
/// Lifetimes: the texture keeps clones of the wgpu device and queue, and its CUDA and Vulkan
/// objects live until both it and every clone of [`SharedTexture::texture`] are gone and wgpu
/// has finished with them, whatever is dropped first.
///
/// **Recovery.** When wgpu refuses the hand-back after CUDA's signal was queued (out of memory, a
/// lost device, or work submitted with it that wgpu refused), the next `write`, or the drop,
/// submits the acquire again: wgpu's queue waits for CUDA's signal on the GPU, the CPU waits for
/// nothing. A value CUDA's signal was queued for is never signalled again, also when recording the
/// event that follows it failed: that event is recorded again (or the context waited for, at most
/// the wait limit) by the next `write`, or the drop, before anything trusts it. A guard leaked with
/// `mem::forget` (or a hand-off whose CUDA wait or signal could not be queued) leaves the image
/// CUDA's with no signal to wait for, and the leaked guard's kernels on a stream that may be gone:
/// the next `write`, or the drop, waits for wgpu's release (at most the wait limit), then for every
/// CUDA work of the context (at most the wait limit, on a thread of its own that stays blocked
/// until that work ends), then hands the image back. Past either limit it returns
/// [`Error::Timeout`](crate::Error::Timeout) and the image stays CUDA's; a drop then leaks the
/// image and semaphore rather than free them under CUDA's work.
///
/// **A CUDA fault stalls wgpu's queue**: see the [module docs](super#a-cuda-fault-stalls-wgpus-queue).
#[derive(Debug)]
pub struct SharedTexture {
    texture: wgpu::Texture,
    resources: Arc<Resources>,
    ctx: Arc<Context>,
    format: SharedFormat,
    size: (u32, u32),
    /// The semaphore's last value asked for (by either side), whose the image is (wgpu's between
    /// writes, CUDA's from a write until the acquire of its signal is submitted), and whether
    /// `done` follows CUDA's last signal.
    turn: Turn,
    ash: DeviceFns,
    family: u32,
    queue: wgpu::Queue,
    /// Last: the device outlives the Vulkan objects it made, whichever drop releases them.
    device: wgpu::Device,
}

impl SharedTexture {
    /// Creates a `width` x `height` texture of `format` on `device` (usages `TEXTURE_BINDING`,
    /// `COPY_SRC` and `COPY_DST`), backed by a Vulkan image on exportable memory that CUDA
    /// context `ctx` imports, with the timeline semaphore of its hand-offs.
    ///
    /// # Errors
    /// - [`UsageError::ZeroSize`] for a zero width or height, [`UsageError::TooLarge`] beyond
    ///   the device's `max_texture_dimension_2d`;
    /// - [`WgpuError::ExportTooLarge`] beyond the driver's limit for exportable images of
    ///   `format` (which may be smaller: wgpu's other modes still take that size);
    /// - what [`check_device`](super::check_device) refuses;
    /// - [`WgpuError::MissingFeature`] for `R16Unorm` or `Rg16Unorm` on a device opened
    ///   without `TEXTURE_FORMAT_16BIT_NORM`;
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
        format.check_features(device, "cuda_gl::wgpu_interop::SharedTexture::new")?;
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
        check_export_size((width, height), (max.width, max.height), format)?;
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
            done: Event::new(ctx, false)?,
            held: ManuallyDrop::new(Held {
                cuda_image,
                cuda_timeline,
                vk_timeline,
                vk_image,
            }),
        });
        let family = hal.queue_family_index();
        let wgpu_desc = texture_descriptor(
            (width, height),
            format,
            "cuda_gl::wgpu_interop::SharedTexture",
            wgpu::TextureUsages::TEXTURE_BINDING
                | wgpu::TextureUsages::COPY_SRC
                | wgpu::TextureUsages::COPY_DST,
        );
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
        let kept = resources.clone();
        // SAFETY: SAFETY 3 of the module docs: the image was made on this device as `hal_desc`
        // says (2D, one level, one sample, the format wgpu-hal maps `format.wgpu()` to, the usage
        // wgpu-hal maps `hal_desc.usage` to (a superset of what `wgpu_desc` asks for: storage), no MUTABLE_FORMAT and no view formats); with a drop
        // callback and `TextureMemory::External`, wgpu-hal destroys neither the image nor the
        // memory, which `kept` keeps alive until the callback runs.
        let hal_texture = unsafe {
            hal.texture_from_raw(
                image,
                &hal_desc,
                Some(Box::new(move || drop(kept))),
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
            turn: Turn::new(),
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
        self.turn.value
    }

    /// Whether the texture is still alive: not destroyed by the application
    /// (`wgpu::Texture::destroy` on a clone), after which wgpu refuses every use of it.
    fn is_alive(&self) -> bool {
        super::scope::is_alive(&self.texture)
    }

    /// Refuses a texture that the application destroyed: wgpu would refuse the hand-off's
    /// submits.
    fn check_alive(&self) -> Result<()> {
        if self.is_alive() {
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
    /// (The hand-off's semaphore wait and signal go on cuda-gl's private stream, joined to
    /// `stream` by events, so that a graph capture begun on `stream` meanwhile never takes
    /// them: a captured signal would run only when the graph runs, and wgpu would wait for it.)
    ///
    /// # Safety
    /// 1. From this call until the guard's [`finish`](CudaWrite::finish),
    ///    [`finish_then_release`](CudaWrite::finish_then_release) or drop has handed the image
    ///    back (a finish that returned `Ok`, or a drop that recorded no error), and
    ///    after a failed hand-back or a leaked guard until a later `write` returns `Ok` (which
    ///    recovers the image first), no wgpu command uses the texture (a clone of
    ///    [`texture`](Self::texture)): no submitted pass or copy, and no
    ///    `Queue::write_texture` (wgpu runs those at its next submit, which may be the
    ///    hand-back's own, before its barriers). The image is CUDA's then, in a layout and
    ///    queue family wgpu does not track, and a wgpu command on it would be invalid Vulkan
    ///    usage. (The guard borrows this value mutably, so only a clone of the
    ///    `wgpu::Texture` taken before can break this. [`WgpuTarget`](super::WgpuTarget)
    ///    never hands out the image it writes, and has no such condition.)
    ///
    /// # Errors
    /// [`UsageError::WrongCudaContext`] for a stream of another context;
    /// [`Error::StreamCapturing`](crate::Error::StreamCapturing) for a stream capturing a graph; the driver's error from
    /// `cuWaitExternalSemaphoresAsync` (the image then stays CUDA's until the next write or the
    /// drop recovers it); [`WgpuError::TextureDestroyed`] when the texture was destroyed
    /// through wgpu; [`WgpuError::Refused`] or [`WgpuError::OutOfMemory`] from the hand-off's
    /// submits; what the recovery of an image that an earlier write left CUDA's returns
    /// (see the type's docs, "Recovery": wgpu's refusal again, or
    /// [`Error::Timeout`](crate::Error::Timeout) for a leaked guard whose work outlasts the wait
    /// limit).
    pub unsafe fn write<'t, S: AsStream>(&'t mut self, stream: &'t S) -> Result<CudaWrite<'t, S>> {
        check_same_context(&self.ctx, stream, "the shared texture")?;
        refuse_capturing(
            &self.ctx,
            stream,
            "cuda_gl::wgpu_interop::SharedTexture::write",
        )?;
        self.check_alive()?;
        // From here the image is released to CUDA: until a signal of CUDA's is acquired back,
        // it is CUDA's, also when the wait below is not queued (then the next write or the
        // drop recovers it).
        let release = self.release_for_write()?;
        let semaphore = self.resources.held.cuda_timeline.raw;
        // SAFETY: the stream is live while borrowed and of this context (checked). In the
        // work: the semaphore lives as long as `self.resources`, which outlives the private
        // stream's use of it (`done`, recorded after a later signal on the same private
        // stream, is waited for before it goes); wgpu signals `release` (queued above).
        unsafe {
            self.ctx.run_now(
                stream.raw_stream(),
                "cuWaitExternalSemaphoresAsync (not called)",
                |p| Ok(result::external::wait_semaphore(semaphore, release, p)?),
            )
        }?;
        Ok(CudaWrite {
            texture: self,
            stream,
            done: false,
        })
    }
}

impl Drop for SharedTexture {
    fn drop(&mut self) {
        let _in_drop = InDrop::enter();
        // Hand the image back so that wgpu's later uses (of clones of the texture) are ordered
        // after CUDA. When that fails for a leaked guard, CUDA may still wait on the semaphore
        // or write the image (work that `done` does not follow): the resources are leaked
        // rather than destroyed under it.
        if !self.recover_for_drop() {
            log::error!("cuda-gl: a shared texture's image and semaphore leaked");
            std::mem::forget(self.resources.clone());
        }
        // A refused hand-off may have left a semaphore operation pending in wgpu-hal, which the
        // application's next submit would carry after the semaphore is gone.
        if let Err(e) = self
            .handoff_of([self.part(self.turn.value)])
            .forget_pending()
        {
            self.ctx
                .record_drop_error("taking back a shared texture's pending semaphore", e);
        }
    }
}

/// Refuses a zero size or one beyond `max` (the device's `max_texture_dimension_2d`).
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
            what: "SharedTexture::new: a shared texture's width or height",
            value: largest.into(),
            max: max.into(),
        }
        .into());
    }
    Ok(())
}

/// Refuses a size beyond `max`, the driver's largest exportable image of `format`: a limit of
/// this mode's (a [`WgpuError`]), not of the call's arguments, so that a target or planes in
/// auto mode fall back to staged, which wgpu's own limit bounds.
fn check_export_size(
    (width, height): (u32, u32),
    (max_width, max_height): (u32, u32),
    format: SharedFormat,
) -> Result<()> {
    if width <= max_width && height <= max_height {
        return Ok(());
    }
    Err(WgpuError::ExportTooLarge {
        call: "cuda_gl::wgpu_interop::SharedTexture::new",
        format: format!("{:?}", format.vk()),
        size: (width, height),
        max: (max_width, max_height),
    }
    .into())
}

#[cfg(test)]
mod tests;
