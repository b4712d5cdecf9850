//! The plain-call route through wgpu (row `plain calls through wgpu`, the floor of the
//! `SharedTexture` raw hand-off's target): the plain route's frame (`plain.rs`: the same
//! image, semaphore, sink, CUDA calls and Vulkan commands) with its Vulkan half handed to wgpu
//! as an application on wgpu would hand it, so that wgpu's own cost per submit counts on both
//! sides of the ratio and the rest is cuda-gl's work.
//!
//! Each frame, after the CUDA half (wait, kernel through the surface, signal of `v + 1`):
//! 1. a wgpu command encoder, into whose open command buffer (`CommandEncoder::as_hal_mut`)
//!    the plain route's commands are recorded raw: the acquire from `VK_QUEUE_FAMILY_EXTERNAL`
//!    and the 1-texel `vkCmdCopyImage` into the sink, the image in `GENERAL` as ever. wgpu knows
//!    neither image, so it adds no barrier of its own: the GPU work is the plain row's;
//! 2. the wait for `v + 1` (at the transfer stage) and the signal of `v + 2` added to wgpu-hal's
//!    queue (`Queue::add_wait_semaphore`, `add_signal_semaphore`, as cuda-gl's hand-off adds
//!    its own), carried by the next submit;
//! 3. one `wgpu::Queue::submit` of the encoder (wgpu-core's tracking and internal transition
//!    buffer, wgpu-hal's relay semaphore and fence signal: what every wgpu submit costs);
//! 4. the wait every row of the group makes: `Device::poll(PollType::Wait)` for that submit.
//!
//! The image is not made a wgpu texture: a texture wgpu records nothing on changes no work,
//! and a copy recorded by wgpu would first move the image to `TRANSFER_SRC_OPTIMAL` (wgpu's
//! layout for a copy's source), which the plain row never does.
//!
//! Ordering and teardown are the plain route's: the signal covers the buffer's commands, the
//! next frame's CUDA wait follows it, and the route's teardown waits for the semaphore's last
//! value (now signalled by wgpu's submit) before anything is destroyed. wgpu's command buffer
//! names the route's raw images; once the signal is reached it is done, and wgpu resets it
//! before its next use.

use super::super::plain_vk::USE_STAGE;
use super::PlainRoute;
use crate::wgpu_present::Wgpu;
use anyhow::{Context as _, Result, ensure};
use wgpu::hal::api::Vulkan;

/// The submit, in errors.
const CALL: &str = "wgpu::Queue::submit (the plain calls through wgpu)";

impl PlainRoute {
    /// Records the use into a wgpu command buffer and submits it on `w`'s queue, after the
    /// semaphore reaches `wait`, signalling `signal`; the submit's index, for the row's wait.
    /// When wgpu refuses the submit, the semaphore operations it did not carry are taken back
    /// (a later submit of another row would carry them otherwise).
    pub(super) fn submit_through_wgpu(
        &self,
        w: &Wgpu,
        wait: u64,
        signal: u64,
    ) -> Result<wgpu::SubmissionIndex> {
        ensure!(
            w.device() == &*self.device && w.queue() == &*self.queue,
            "the plain route runs through the wgpu device it was made on"
        );
        let mut encoder = w
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("wgpu present: plain calls through wgpu"),
            });
        let record = |hal: Option<&mut wgpu::hal::vulkan::CommandEncoder>| {
            let hal = hal?;
            // SAFETY: the handle of the command buffer wgpu-hal has open for this encoder,
            // neither ended nor destroyed here.
            let cmd = unsafe { hal.raw_handle() };
            // SAFETY: (1) a recording buffer of the route's device (wgpu's, checked above), on
            // wgpu's one queue family (the route's), submitted below after the route's last
            // submit was waited for (`frame`: `in_flight` is false).
            unsafe { self.vk.record_use_into(cmd) };
            Some(())
        };
        // SAFETY: (1) the encoder is used by nothing else while the callback records; (2) the
        // callback neither ends nor destroys the command buffer.
        let recorded = unsafe { encoder.as_hal_mut::<Vulkan, _, _>(record) };
        recorded.context("wgpu handed out no Vulkan command encoder")?;
        let commands = encoder.finish();
        let semaphore = self.vk.semaphore;
        {
            // SAFETY: the guard only adds semaphore operations, and drops at the end of the
            // block.
            let hal = unsafe { w.queue().as_hal::<Vulkan>() }.context("wgpu's queue")?;
            // The semaphore is the route's timeline semaphore, of this device: `wait` is
            // CUDA's queued signal, and `signal` is above every value signalled or pending.
            hal.add_wait_semaphore(semaphore, Some(wait), USE_STAGE);
            hal.add_signal_semaphore(semaphore, Some(signal));
        }
        let submitted = w.queue().submit([commands]);
        if let Err(e) = w.check(CALL) {
            // SAFETY: as above; the guard only takes semaphore operations back.
            if let Some(hal) = unsafe { w.queue().as_hal::<Vulkan>() } {
                hal.remove_wait_semaphore(semaphore);
                hal.remove_signal_semaphore(semaphore);
            }
            return Err(e);
        }
        Ok(submitted)
    }
}
