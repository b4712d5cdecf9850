//! The two hand-offs of a shared texture on wgpu's queue, recorded as Vulkan barriers in raw
//! command buffers that wgpu submits with its own: **release** (wgpu's last use, then the image
//! to CUDA, then the semaphore signalled) and **acquire** (the semaphore waited for, then the
//! image back from CUDA).
//!
//! Layouts and queue-family ownership, by the Vulkan spec:
//! - wgpu tracks the texture's state itself and records no transfer to or from
//!   `VK_QUEUE_FAMILY_EXTERNAL`. At each hand-off the texture is brought to one known wgpu state,
//!   [`WGPU_STATE`] (`RESOURCE`, which wgpu-hal lays out as `SHADER_READ_ONLY_OPTIMAL`), with
//!   `CommandEncoder::transition_resources`, so that wgpu's tracker and the real layout agree
//!   when the raw barriers run.
//! - Release: a barrier from that layout to `GENERAL` on wgpu's queue family, then a release of
//!   ownership to `VK_QUEUE_FAMILY_EXTERNAL` in `GENERAL` (no layout change in the transfer
//!   itself, since CUDA records no matching barrier). CUDA accesses the image in `GENERAL`.
//! - Acquire: an acquire from `VK_QUEUE_FAMILY_EXTERNAL` in `GENERAL`, then a barrier back to
//!   the layout of [`WGPU_STATE`], which wgpu's tracker still holds.
//! - Ordering: the semaphore signal of the release goes on a submit after the barriers (a
//!   signal's first scope covers every command earlier in submission order), and the wait of
//!   the acquire on the submit of the barriers (a wait's second scope covers every command later
//!   in submission order), so a submit of the application's between them, from another thread,
//!   can take the semaphore operation but not break the order.

use super::scope::{scoped, wait_for_submission};
use super::{Vulkan, WgpuError};
use crate::error::{Error, Result};
use crate::stream::DEFAULT_WAIT_LIMIT;
use ash::vk;

/// The wgpu state of the texture at every hand-off.
pub(super) const WGPU_STATE: wgpu::TextureUses = wgpu::TextureUses::RESOURCE;
/// The layout wgpu-hal 30 gives [`WGPU_STATE`] for a color format
/// (`wgpu_hal::vulkan::conv::derive_image_layout`).
const WGPU_LAYOUT: vk::ImageLayout = vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL;
/// The layout CUDA accesses the image in: `GENERAL` supports every kind of access.
const CUDA_LAYOUT: vk::ImageLayout = vk::ImageLayout::GENERAL;

/// The semaphore operations' and barriers' stage: everything.
const ALL: vk::PipelineStageFlags = vk::PipelineStageFlags::ALL_COMMANDS;
const READ_WRITE: vk::AccessFlags = vk::AccessFlags::from_raw(
    vk::AccessFlags::MEMORY_READ.as_raw() | vk::AccessFlags::MEMORY_WRITE.as_raw(),
);

/// What a hand-off needs: wgpu's handles, and the raw ones behind them.
pub(super) struct Handoff<'a> {
    pub device: &'a wgpu::Device,
    pub queue: &'a wgpu::Queue,
    pub texture: &'a wgpu::Texture,
    /// wgpu-hal's device, for recording into raw command buffers.
    pub ash: &'a ash::Device,
    /// wgpu's queue family (`wgpu_hal::vulkan::Device::queue_family_index`).
    pub family: u32,
    pub image: vk::Image,
    pub semaphore: vk::Semaphore,
}

fn whole_color_image(image: vk::Image) -> vk::ImageMemoryBarrier<'static> {
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

/// The barriers of a release (`true`) or an acquire (`false`), each recorded by its own
/// `vkCmdPipelineBarrier` so that they run one after the other: (stages, barrier).
fn barriers(
    release: bool,
    image: vk::Image,
    family: u32,
) -> [(
    vk::PipelineStageFlags,
    vk::PipelineStageFlags,
    vk::ImageMemoryBarrier<'static>,
); 2] {
    let transition = |from, to| {
        whole_color_image(image)
            .old_layout(from)
            .new_layout(to)
            .src_access_mask(READ_WRITE)
            .dst_access_mask(READ_WRITE)
    };
    if release {
        [
            (ALL, ALL, transition(WGPU_LAYOUT, CUDA_LAYOUT)),
            (
                ALL,
                vk::PipelineStageFlags::BOTTOM_OF_PIPE,
                whole_color_image(image)
                    .old_layout(CUDA_LAYOUT)
                    .new_layout(CUDA_LAYOUT)
                    .src_access_mask(vk::AccessFlags::MEMORY_WRITE)
                    .src_queue_family_index(family)
                    .dst_queue_family_index(vk::QUEUE_FAMILY_EXTERNAL),
            ),
        ]
    } else {
        [
            (
                // The source stage is the semaphore wait's stage, so that the acquire is
                // ordered after the wait.
                ALL,
                ALL,
                whole_color_image(image)
                    .old_layout(CUDA_LAYOUT)
                    .new_layout(CUDA_LAYOUT)
                    .dst_access_mask(READ_WRITE)
                    .src_queue_family_index(vk::QUEUE_FAMILY_EXTERNAL)
                    .dst_queue_family_index(family),
            ),
            (ALL, ALL, transition(CUDA_LAYOUT, WGPU_LAYOUT)),
        ]
    }
}

impl Handoff<'_> {
    /// A command buffer that brings the texture to [`WGPU_STATE`] in wgpu's tracker. It also
    /// makes the submit that carries it one that uses the texture, so that wgpu does not destroy
    /// the texture before that submit (and the raw barriers beside it) are done.
    fn tracked_transition(&self) -> wgpu::CommandBuffer {
        let mut encoder = self.device.create_command_encoder(&Default::default());
        encoder.transition_resources(
            std::iter::empty(),
            std::iter::once(wgpu::TextureTransition {
                texture: self.texture,
                selector: None,
                state: WGPU_STATE,
            }),
        );
        encoder.finish()
    }

    /// A raw command buffer with the barriers of a release or an acquire.
    fn raw_barriers(&self, release: bool) -> Result<wgpu::CommandBuffer> {
        let mut encoder = self.device.create_command_encoder(&Default::default());
        let recorded = {
            let record = |hal: Option<&mut wgpu::hal::vulkan::CommandEncoder>| {
                let hal = hal?;
                // SAFETY: SAFETY 4 of the module docs: the command buffer is the one wgpu-hal
                // has open for this encoder; it is neither destroyed nor ended here.
                let cmd = unsafe { hal.raw_handle() };
                for (src, dst, barrier) in barriers(release, self.image, self.family) {
                    // SAFETY: a recording command buffer of `self.ash`'s device; the image is
                    // live (the shared texture's resources outlive every submit that names it,
                    // SAFETY 5) and the barriers name its only subresource.
                    unsafe {
                        self.ash.cmd_pipeline_barrier(
                            cmd,
                            src,
                            dst,
                            vk::DependencyFlags::empty(),
                            &[],
                            &[],
                            &[barrier],
                        );
                    }
                }
                Some(())
            };
            // SAFETY: SAFETY 4: the encoder is not used through wgpu while the callback records,
            // and the callback neither ends nor destroys the command buffer.
            unsafe { encoder.as_hal_mut::<Vulkan, _, _>(record) }
        };
        recorded.ok_or(WgpuError::Refused {
            call: "wgpu::CommandEncoder::as_hal_mut",
            message: "wgpu handed out no Vulkan command encoder (the device was destroyed or \
                      lost)"
                .into(),
        })?;
        Ok(encoder.finish())
    }

    /// wgpu's queue, as wgpu-hal's Vulkan queue.
    fn with_hal_queue<R>(&self, f: impl FnOnce(&wgpu::hal::vulkan::Queue) -> R) -> Result<R> {
        // SAFETY: the guard is only used to add semaphore operations, and dropped at once.
        let hal = unsafe { self.queue.as_hal::<Vulkan>() }.ok_or(WgpuError::NotVulkan {
            call: "wgpu::Queue::as_hal",
            what: "queue",
            backend: "another".into(),
        })?;
        Ok(f(&hal))
    }

    /// wgpu to CUDA: after every use of the texture submitted so far, brings it to `GENERAL`,
    /// releases it to `VK_QUEUE_FAMILY_EXTERNAL`, and signals the semaphore to `value`. The
    /// signal is added only once the barriers' submit was accepted.
    ///
    /// When wgpu refuses the empty submit that carries the signal (so the signal is still
    /// pending in wgpu-hal: nothing will carry it, and a later submit of the application's
    /// would signal a value out of order), the signal is taken back, the barriers' submit is
    /// waited for (at most 10 s) and the value signalled from the host: the release then
    /// stands as if the signal had been submitted.
    ///
    /// `released` is set once the barriers' submit is accepted: from then on the image is
    /// CUDA's, whatever follows.
    ///
    /// # Errors
    /// [`WgpuError::Refused`] or [`WgpuError::OutOfMemory`] when wgpu refuses the barriers'
    /// submit (nothing was released); [`Error::Timeout`](crate::Error::Timeout) or
    /// [`WgpuError::Vulkan`] when the host's signal could not be made (the image is released
    /// and `value` may never be signalled: a recovery waits for it, with a limit).
    pub fn release(&self, value: u64, released: &mut bool) -> Result<()> {
        const CALL: &str = "wgpu::Queue::submit (a shared texture's release to CUDA)";
        let barriers = scoped(self.device, CALL, || {
            let barriers = self.raw_barriers(true)?;
            Ok::<_, Error>(self.queue.submit([self.tracked_transition(), barriers]))
        })
        .and_then(|r| r)?;
        *released = true;
        let signalled = scoped(self.device, CALL, || {
            self.with_hal_queue(|hal| hal.add_signal_semaphore(self.semaphore, Some(value)))?;
            // An empty submit carries the signal: wgpu 30 submits to the hal queue even then.
            self.queue.submit([]);
            Ok::<_, Error>(())
        })
        .and_then(|r| r);
        if let Err(e) = signalled {
            let pending = self.with_hal_queue(|hal| hal.remove_signal_semaphore(self.semaphore))?;
            if pending {
                log::warn!(
                    "cuda-gl: the release's signal was refused ({e}); signalling from the host"
                );
                self.signal_from_host(barriers, value)?;
            }
        }
        Ok(())
    }

    /// Signals `value` from the host once the submit `after` is done (at most 10 s).
    fn signal_from_host(&self, after: wgpu::SubmissionIndex, value: u64) -> Result<()> {
        wait_for_submission(
            self.device,
            after,
            DEFAULT_WAIT_LIMIT,
            "a shared texture's release",
        )?;
        let info = vk::SemaphoreSignalInfo::default()
            .semaphore(self.semaphore)
            .value(value);
        // SAFETY: a live timeline semaphore of this device; `value` is above every value
        // signalled or pending (the hand-offs' values only grow, and the pending signal of
        // `value` was taken back).
        unsafe { self.ash.signal_semaphore(&info) }.map_err(|e| WgpuError::Vulkan {
            call: "vkSignalSemaphore",
            result: format!("{e:?}"),
            help: "the Vulkan device may be lost",
        })?;
        Ok(())
    }

    /// CUDA to wgpu: waits for the semaphore to reach `value`, acquires the image from
    /// `VK_QUEUE_FAMILY_EXTERNAL` and brings it back to [`WGPU_STATE`]'s layout, before any
    /// later submit of wgpu's.
    ///
    /// # Errors
    /// [`WgpuError::Refused`] or [`WgpuError::OutOfMemory`] when wgpu refuses the submit: the
    /// wait is taken back from wgpu-hal (a later submit of the application's would otherwise
    /// carry it, without the barriers), and the image stays CUDA's.
    ///
    /// `then`, when given, goes in the same submit after the acquire (one submit fewer for
    /// work that uses the image at once, such as a display target's present blit, which reads
    /// the image in [`WGPU_STATE`]: the state `tracked` leaves, so wgpu records no barrier of
    /// its own for it).
    pub fn acquire(&self, value: u64, then: Option<wgpu::CommandBuffer>) -> Result<()> {
        // A refusal of the submit with `then` is most likely `then`'s (wgpu 30 refuses a
        // texture destroyed after the recording only here): the error names it.
        let call = if then.is_some() {
            "wgpu::Queue::submit (a shared texture's acquire from CUDA, with the command buffer \
             after it: a target's present blit or copy into the texture the application samples)"
        } else {
            "wgpu::Queue::submit (a shared texture's acquire from CUDA)"
        };
        let acquired = scoped(self.device, call, || {
            let barriers = self.raw_barriers(false)?;
            let tracked = self.tracked_transition();
            self.with_hal_queue(|hal| hal.add_wait_semaphore(self.semaphore, Some(value), ALL))?;
            self.queue
                .submit([barriers, tracked].into_iter().chain(then));
            Ok::<_, Error>(())
        })
        .and_then(|r| r);
        if acquired.is_err() {
            self.forget_pending()?;
        }
        acquired
    }

    /// Takes back whatever semaphore operation of this texture is still pending in wgpu-hal,
    /// for the next submit: before the semaphore goes, or after a refused hand-off.
    pub fn forget_pending(&self) -> Result<()> {
        self.with_hal_queue(|hal| {
            hal.remove_wait_semaphore(self.semaphore);
            hal.remove_signal_semaphore(self.semaphore);
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn the_release_and_the_acquire_mirror_each_other() {
        let image = vk::Image::null();
        let [(_, _, to_general), (_, _, release)] = barriers(true, image, 3);
        let [(_, _, acquire), (_, _, back)] = barriers(false, image, 3);
        assert_eq!(
            (to_general.old_layout, to_general.new_layout),
            (WGPU_LAYOUT, CUDA_LAYOUT)
        );
        assert_eq!(
            (back.old_layout, back.new_layout),
            (CUDA_LAYOUT, WGPU_LAYOUT)
        );
        // The ownership transfers change no layout, and go to and come from the external family.
        for b in [release, acquire] {
            assert_eq!((b.old_layout, b.new_layout), (CUDA_LAYOUT, CUDA_LAYOUT));
        }
        assert_eq!(
            (
                release.src_queue_family_index,
                release.dst_queue_family_index
            ),
            (3, vk::QUEUE_FAMILY_EXTERNAL)
        );
        assert_eq!(
            (
                acquire.src_queue_family_index,
                acquire.dst_queue_family_index
            ),
            (vk::QUEUE_FAMILY_EXTERNAL, 3)
        );
        // Same-family transitions transfer nothing.
        for b in [to_general, back] {
            assert_eq!(b.src_queue_family_index, vk::QUEUE_FAMILY_IGNORED);
            assert_eq!(b.dst_queue_family_index, vk::QUEUE_FAMILY_IGNORED);
        }
    }
}
