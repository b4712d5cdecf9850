//! The two hand-offs of one or more shared textures on wgpu's queue, recorded as Vulkan
//! barriers in raw command buffers that wgpu submits with its own: **release** (wgpu's last
//! use, then the image to CUDA, then the semaphore signalled) and **acquire** (the semaphore
//! waited for, then the image back from CUDA).
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
//!   in submission order, within its stage mask: [`ALL`], every stage), so a submit of the application's between them, from another thread,
//!   can take the semaphore operation but not break the order.
//! - Several images handed over together (a video frame's planes): one submit carries the
//!   barriers of all of them (each of the two steps one `vkCmdPipelineBarrier` over every
//!   image), one empty submit after it every signal, and one submit every wait with the
//!   acquire's barriers. Each image keeps its own semaphore and values, and each argument above
//!   holds for each image and its semaphore as it does alone: a signal's or a wait's scope is
//!   every command earlier or later in submission order, whichever image they name.
//! - A release right after an acquire (a display target's present, which hands its image back,
//!   blits it, and releases it to CUDA ahead of the next frame; a video planes' upload, whose
//!   copies or blits read both images): the release's barriers go in the acquire's submit,
//!   after that work, and its signals in the empty submit after it; two submits instead of
//!   three. The order argument above is about submission order only, so it
//!   holds unchanged.

use super::scope::{scoped, wait_for_submission};
use super::{Vulkan, WgpuError};
use crate::error::{Error, Result};
use crate::stream::wait_limit;
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
/// The release's submits, for their errors.
const RELEASE_CALL: &str = "wgpu::Queue::submit (a shared texture's release to CUDA)";
const READ_WRITE: vk::AccessFlags = vk::AccessFlags::from_raw(
    vk::AccessFlags::MEMORY_READ.as_raw() | vk::AccessFlags::MEMORY_WRITE.as_raw(),
);

/// One image of a hand-off: its wgpu texture, its Vulkan image and timeline semaphore, and the
/// value that the hand-off signals (a release) or waits for (an acquire).
#[derive(Clone, Copy)]
pub(super) struct Part<'a> {
    pub texture: &'a wgpu::Texture,
    pub image: vk::Image,
    pub semaphore: vk::Semaphore,
    pub value: u64,
}

/// What a hand-off of `N` images together needs: wgpu's handles, and the raw ones behind them.
/// The images are of one wgpu device and handed over on its one queue (a group's check).
pub(super) struct Handoff<'a, const N: usize> {
    pub device: &'a wgpu::Device,
    pub queue: &'a wgpu::Queue,
    /// wgpu-hal's device, for recording into raw command buffers.
    pub ash: &'a ash::Device,
    /// wgpu's queue family (`wgpu_hal::vulkan::Device::queue_family_index`).
    pub family: u32,
    pub parts: [Part<'a>; N],
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

/// The stages of a release's (`true`) or an acquire's (`false`) two steps: (source, destination).
fn stages(release: bool) -> [(vk::PipelineStageFlags, vk::PipelineStageFlags); 2] {
    if release {
        [(ALL, ALL), (ALL, vk::PipelineStageFlags::BOTTOM_OF_PIPE)]
    } else {
        // The first source stage is the semaphore wait's stage, so that the acquire is ordered
        // after the wait.
        [(ALL, ALL), (ALL, ALL)]
    }
}

/// The barriers of one image's release (`true`) or acquire (`false`), in the order of their
/// steps.
fn image_barriers(
    release: bool,
    image: vk::Image,
    family: u32,
) -> [vk::ImageMemoryBarrier<'static>; 2] {
    let transition = |from, to| {
        whole_color_image(image)
            .old_layout(from)
            .new_layout(to)
            .src_access_mask(READ_WRITE)
            .dst_access_mask(READ_WRITE)
    };
    if release {
        [
            transition(WGPU_LAYOUT, CUDA_LAYOUT),
            whole_color_image(image)
                .old_layout(CUDA_LAYOUT)
                .new_layout(CUDA_LAYOUT)
                .src_access_mask(vk::AccessFlags::MEMORY_WRITE)
                .src_queue_family_index(family)
                .dst_queue_family_index(vk::QUEUE_FAMILY_EXTERNAL),
        ]
    } else {
        [
            whole_color_image(image)
                .old_layout(CUDA_LAYOUT)
                .new_layout(CUDA_LAYOUT)
                .dst_access_mask(READ_WRITE)
                .src_queue_family_index(vk::QUEUE_FAMILY_EXTERNAL)
                .dst_queue_family_index(family),
            transition(CUDA_LAYOUT, WGPU_LAYOUT),
        ]
    }
}

/// One `vkCmdPipelineBarrier`: its source and destination stages, and one barrier per image.
type Step<const N: usize> = (
    vk::PipelineStageFlags,
    vk::PipelineStageFlags,
    [vk::ImageMemoryBarrier<'static>; N],
);

/// The barriers of the release (`true`) or the acquire (`false`) of `images`, in two steps,
/// each recorded by its own `vkCmdPipelineBarrier` so that they run one after the other (for
/// each image, the layout change and the ownership transfer stay ordered); a step holds the
/// barrier of every image, which name distinct images and need no order among themselves.
fn barriers<const N: usize>(release: bool, images: [vk::Image; N], family: u32) -> [Step<N>; 2] {
    let each = images.map(|image| image_barriers(release, image, family));
    let [(src0, dst0), (src1, dst1)] = stages(release);
    [
        (src0, dst0, each.map(|[first, _]| first)),
        (src1, dst1, each.map(|[_, second]| second)),
    ]
}

impl<const N: usize> Handoff<'_, N> {
    /// A command buffer that brings every texture to [`WGPU_STATE`] in wgpu's tracker. It also
    /// makes the submit that carries it one that uses each texture, so that wgpu destroys none
    /// of them before that submit (and the raw barriers beside it) are done.
    fn tracked_transition(&self) -> wgpu::CommandBuffer {
        let mut encoder = self.device.create_command_encoder(&Default::default());
        encoder.transition_resources(
            std::iter::empty(),
            self.parts.iter().map(|part| wgpu::TextureTransition {
                texture: part.texture,
                selector: None,
                state: WGPU_STATE,
            }),
        );
        encoder.finish()
    }

    /// A raw command buffer with the barriers of a release or an acquire of every image.
    fn raw_barriers(&self, release: bool) -> Result<wgpu::CommandBuffer> {
        let mut encoder = self.device.create_command_encoder(&Default::default());
        let recorded = {
            let record = |hal: Option<&mut wgpu::hal::vulkan::CommandEncoder>| {
                let hal = hal?;
                // SAFETY: SAFETY 4 of the module docs: the command buffer is the one wgpu-hal
                // has open for this encoder; it is neither destroyed nor ended here.
                let cmd = unsafe { hal.raw_handle() };
                let images = self.parts.map(|part| part.image);
                for (src, dst, step) in barriers(release, images, self.family) {
                    // SAFETY: a recording command buffer of `self.ash`'s device; the images are
                    // live (a shared texture's resources outlive every submit that names its
                    // image, SAFETY 5: the tracked transition beside these barriers names each
                    // texture) and each barrier names its image's only subresource.
                    unsafe {
                        self.ash.cmd_pipeline_barrier(
                            cmd,
                            src,
                            dst,
                            vk::DependencyFlags::empty(),
                            &[],
                            &[],
                            &step,
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
        // SAFETY: the guard is only used to add or take back semaphore operations, and dropped
        // at once.
        let hal = unsafe { self.queue.as_hal::<Vulkan>() }.ok_or(WgpuError::NotVulkan {
            call: "wgpu::Queue::as_hal",
            what: "queue",
            backend: "another".into(),
        })?;
        Ok(f(&hal))
    }

    /// wgpu to CUDA: after every use of the textures submitted so far, brings each image to
    /// `GENERAL`, releases it to `VK_QUEUE_FAMILY_EXTERNAL`, and signals its semaphore to its
    /// part's value. The barriers of every image go in one submit, and the signals are added
    /// only once it was accepted, all carried by one empty submit after it.
    ///
    /// When wgpu refuses that empty submit (so the signals are still pending in wgpu-hal: nothing
    /// will carry them, and a later submit of the application's would signal values out of order),
    /// each signal still pending is taken back, the barriers' submit is waited for (at most the
    /// [wait limit](crate::wait_limit), 10 s by default) and those values signalled from the host:
    /// the release then stands as if the signals had been submitted. (A submit of another thread's
    /// between the signals' addition and the empty submit may have carried some of them, after the
    /// barriers: those are not pending any more, and are not signalled again.)
    ///
    /// `released` is set once the barriers' submit is accepted: from then on every image is
    /// CUDA's, whatever follows. `unsignalled` says, per part, whether its value is then never
    /// signalled: its signal was taken back and the host's was not made (nothing else will
    /// make it, so nothing must wait for it).
    ///
    /// # Errors
    /// [`WgpuError::Refused`] or [`WgpuError::OutOfMemory`] when wgpu refuses the barriers'
    /// submit (nothing was released); [`Error::Timeout`](crate::Error::Timeout) or
    /// [`WgpuError::Vulkan`] when the host's signals could not be made (the images are released,
    /// and the values `unsignalled` names are never signalled).
    pub fn release(&self, released: &mut bool, unsignalled: &mut [bool; N]) -> Result<()> {
        let barriers = scoped(self.device, RELEASE_CALL, || {
            let barriers = self.raw_barriers(true)?;
            Ok::<_, Error>(self.queue.submit([self.tracked_transition(), barriers]))
        })
        .and_then(|r| r)?;
        *released = true;
        self.signal_release(barriers, unsignalled)
    }

    /// The release's second half, once the submit `after` that carries its barriers was
    /// accepted: each part's value signalled, by one empty submit (or from the host, as
    /// [`release`](Self::release) says, when wgpu refuses it). `unsignalled` as for `release`.
    ///
    /// # Errors
    /// [`Error::Timeout`](crate::Error::Timeout) or [`WgpuError::Vulkan`] when the host's
    /// signals could not be made (the values `unsignalled` names are never signalled).
    pub fn signal_release(
        &self,
        after: wgpu::SubmissionIndex,
        unsignalled: &mut [bool; N],
    ) -> Result<()> {
        let signalled = scoped(self.device, RELEASE_CALL, || {
            self.with_hal_queue(|hal| {
                for part in &self.parts {
                    hal.add_signal_semaphore(part.semaphore, Some(part.value));
                }
            })?;
            // An empty submit carries the signals: wgpu 30 submits to the hal queue even then.
            self.queue.submit([]);
            Ok::<_, Error>(())
        })
        .and_then(|r| r);
        if let Err(e) = signalled {
            let pending = self.with_hal_queue(|hal| {
                self.parts
                    .map(|part| hal.remove_signal_semaphore(part.semaphore))
            })?;
            if pending.contains(&true) {
                log::warn!(
                    "cuda-gl: the release's signal was refused ({e}); signalling from the host"
                );
                *unsignalled = pending;
                self.signal_from_host(after, unsignalled)?;
            }
        }
        Ok(())
    }

    /// Signals each part's value from the host where `pending` says, once the submit `after`
    /// is done (at most the wait limit), clearing each flag once its signal is made: on an
    /// error, those still set are never signalled.
    fn signal_from_host(
        &self,
        after: wgpu::SubmissionIndex,
        pending: &mut [bool; N],
    ) -> Result<()> {
        wait_for_submission(
            self.device,
            after,
            wait_limit(),
            "a shared texture's release",
        )?;
        for (part, pending) in self.parts.iter().zip(pending).filter(|(_, p)| **p) {
            let info = vk::SemaphoreSignalInfo::default()
                .semaphore(part.semaphore)
                .value(part.value);
            // SAFETY: a live timeline semaphore of this device; `part.value` is above every
            // value signalled or pending on it (a texture's values only grow, and the pending
            // signal of `part.value` was taken back).
            unsafe { self.ash.signal_semaphore(&info) }.map_err(|e| WgpuError::Vulkan {
                call: "vkSignalSemaphore",
                result: format!("{e:?}"),
                help: "the Vulkan device may be lost",
            })?;
            *pending = false;
        }
        Ok(())
    }

    /// CUDA to wgpu: waits for each semaphore to reach its part's value, acquires every image
    /// from `VK_QUEUE_FAMILY_EXTERNAL` and brings it back to [`WGPU_STATE`]'s layout, before any
    /// later submit of wgpu's; all in one submit, which carries every wait.
    ///
    /// `then`, when given, goes in the same submit after the acquire (one submit fewer for
    /// work that uses the images at once, such as a display target's present blit, which reads
    /// the image in [`WGPU_STATE`], the state `tracked` leaves, so that wgpu records no barrier
    /// of its own for it; a present's copy reads it as `COPY_SRC`, and wgpu puts its own
    /// barrier before the copy's command buffer).
    ///
    /// Returns the submit, which carried `then`.
    ///
    /// # Errors
    /// [`WgpuError::Refused`] or [`WgpuError::OutOfMemory`] when wgpu refuses the submit: every
    /// wait still pending is taken back from wgpu-hal (a later submit of the application's
    /// would otherwise carry it, without the barriers), and the images stay CUDA's.
    pub fn acquire(&self, then: Option<wgpu::CommandBuffer>) -> Result<wgpu::SubmissionIndex> {
        self.submit_acquire(then, None)
    }

    /// [`acquire`](Self::acquire) with `then` after it, and the barriers of the images'
    /// release after `then`, all in one submit: the first half of a release to CUDA ahead of
    /// the next write, with one submit fewer than an acquire and a [`release`](Self::release).
    /// The release's barriers follow `then` in submission order, which is all their first scope
    /// needs (as after a separate submit). Returns the submit, which carried `then`, and
    /// whether it carried the release's barriers too: then the release's second half,
    /// [`signal_release`](Self::signal_release) (of a hand-off of the release's values), follows
    /// it, its signals in a later submit than the barriers (the module's notes).
    ///
    /// The release's command buffers are recorded first, under their own error scope: when
    /// wgpu refuses them, the acquire is submitted with `then` alone and `false` returned
    /// (nothing released; the next write releases the images). Recorded beside the submit, a
    /// refused recording would have refused the whole submit after wgpu's tracker took the
    /// states of the command buffers before it.
    ///
    /// # Errors
    /// As [`acquire`](Self::acquire): when refused, nothing was acquired or released.
    pub fn acquire_then_release(
        &self,
        then: wgpu::CommandBuffer,
    ) -> Result<(wgpu::SubmissionIndex, bool)> {
        let release = scoped(self.device, RELEASE_CALL, || {
            Ok::<_, Error>([self.tracked_transition(), self.raw_barriers(true)?])
        })
        .and_then(|r| r);
        match release {
            Ok(release) => self
                .submit_acquire(Some(then), Some(release))
                .map(|index| (index, true)),
            Err(e) => {
                log::warn!(
                    "cuda-gl: recording a shared texture's release was refused ({e}); the \
                     next write releases it"
                );
                self.submit_acquire(Some(then), None)
                    .map(|index| (index, false))
            }
        }
    }

    /// The acquire's submit, with `then` after it and `release`'s command buffers (a tracked
    /// transition, which brings wgpu's state back to [`WGPU_STATE`] after `then`, and the
    /// release's raw barriers) after that.
    fn submit_acquire(
        &self,
        then: Option<wgpu::CommandBuffer>,
        release: Option<[wgpu::CommandBuffer; 2]>,
    ) -> Result<wgpu::SubmissionIndex> {
        // A refusal of the submit with `then` is most likely `then`'s (wgpu 30 refuses a
        // texture destroyed after the recording only here; the release's command buffers were
        // recorded under a scope of their own): the error names it.
        let call = if then.is_some() {
            "wgpu::Queue::submit (a shared texture's acquire from CUDA, with the command buffer \
             after it: a target's present, or video planes' upload, blit or copy into the \
             texture the application samples)"
        } else {
            "wgpu::Queue::submit (a shared texture's acquire from CUDA)"
        };
        let acquired = scoped(self.device, call, || {
            let barriers = self.raw_barriers(false)?;
            let tracked = self.tracked_transition();
            self.with_hal_queue(|hal| {
                for part in &self.parts {
                    hal.add_wait_semaphore(part.semaphore, Some(part.value), ALL);
                }
            })?;
            let index = self.queue.submit(
                [barriers, tracked]
                    .into_iter()
                    .chain(then)
                    .chain(release.into_iter().flatten()),
            );
            Ok::<_, Error>(index)
        })
        .and_then(|r| r);
        if acquired.is_err() {
            self.forget_pending()?;
        }
        acquired
    }

    /// Takes back whatever semaphore operation of these images is still pending in wgpu-hal,
    /// for the next submit: before the semaphores go, or after a refused hand-off.
    pub fn forget_pending(&self) -> Result<()> {
        self.with_hal_queue(|hal| {
            for part in &self.parts {
                hal.remove_wait_semaphore(part.semaphore);
                hal.remove_signal_semaphore(part.semaphore);
            }
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use ash::vk::Handle;

    #[test]
    fn the_release_and_the_acquire_mirror_each_other() {
        let image = vk::Image::null();
        let [to_general, release] = image_barriers(true, image, 3);
        let [acquire, back] = image_barriers(false, image, 3);
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

    /// What a barrier does, field by field (ash's barriers have no `PartialEq`).
    fn fields(
        b: &vk::ImageMemoryBarrier<'_>,
    ) -> (
        vk::Image,
        [vk::ImageLayout; 2],
        [vk::AccessFlags; 2],
        [u32; 2],
        [u32; 4],
        vk::ImageAspectFlags,
    ) {
        let range = b.subresource_range;
        (
            b.image,
            [b.old_layout, b.new_layout],
            [b.src_access_mask, b.dst_access_mask],
            [b.src_queue_family_index, b.dst_queue_family_index],
            [
                range.base_mip_level,
                range.level_count,
                range.base_array_layer,
                range.layer_count,
            ],
            range.aspect_mask,
        )
    }

    /// A hand-off of several images is two `vkCmdPipelineBarrier`s, whatever their number: the
    /// first holds every image's first barrier, the second every image's second, in the
    /// images' order, each the very barrier that a hand-off of that image alone records, at the
    /// same stages. So the ordering of each image's layout change and ownership transfer is the
    /// one-image hand-off's.
    #[test]
    fn a_hand_off_of_n_images_records_each_images_barriers_in_two_steps() {
        let images = [7u64, 11, 13].map(vk::Image::from_raw);
        for release in [true, false] {
            let steps = barriers(release, images, 5);
            for (k, (src, dst, step)) in steps.iter().enumerate() {
                let (alone_src, alone_dst, [alone]) = barriers(release, [images[0]], 5)[k];
                assert_eq!((*src, *dst), (alone_src, alone_dst), "step {k}");
                assert_eq!(fields(&alone), fields(&step[0]), "step {k}");
                for (image, barrier) in images.iter().zip(step) {
                    let want = image_barriers(release, *image, 5)[k];
                    assert_eq!(fields(barrier), fields(&want), "{release} step {k}");
                }
            }
        }
        // No image, no barrier: the steps are empty (a group of none hands nothing over).
        let [(_, _, first), (_, _, second)] = barriers::<0>(true, [], 5);
        assert!(first.is_empty() && second.is_empty());
    }
}
