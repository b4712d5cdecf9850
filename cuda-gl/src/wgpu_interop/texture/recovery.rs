//! How a [`SharedTexture`] hands its image back to wgpu: at the end of a write, and after a
//! hand-back that wgpu refused or a guard that was leaked (the type's docs, "Recovery").

use super::SharedTexture;
use super::group::{After, acquire_all, signal_then_mark};
use super::turn::{Owner, Step};
use crate::error::{Error, Result};
use crate::result;
use crate::stream::wait_limit;
use crate::wgpu_interop::WgpuError;
use ash::vk;
use cuda_gl_sys as sys;
use std::time::Duration;

/// The waits that give up in [`SharedTexture::recover`] (wgpu's release, the context, cuda-gl's
/// private stream), as a drop records their timeout ([`Context::record_drop_wait`]).
///
/// [`Context::record_drop_wait`]: crate::context::Context::record_drop_wait
const RECOVERY_WAITS: &str = "vkWaitSemaphores, cuCtxSynchronize or cuStreamQuery";

/// The waits that give up in [`SharedTexture::wait_for_cuda`]: the recovery's and the one for
/// CUDA's last hand-off (`cuEventQuery`).
pub(crate) const WAIT_FOR_CUDA: &str =
    "cuEventQuery, vkWaitSemaphores, cuCtxSynchronize or cuStreamQuery";

impl SharedTexture {
    /// CUDA to wgpu: after the work queued on `stream` so far, the semaphore is signalled to
    /// the next value (and `done` recorded), and wgpu's next submit waits for that signal, with
    /// `after`'s work after it (and the release it asks for, but when `done` could not be
    /// recorded). The image is [`Owner::Signalled`] once CUDA's signal is queued, and wgpu's
    /// once the acquire is (then [`Owner::Ahead`] where `after` releases it).
    ///
    /// # Errors
    /// The driver's error from the signal (nothing queued: the image stays CUDA's); wgpu's
    /// refusal of the acquire; the driver's error from recording `done` after a queued signal
    /// (the acquire is submitted all the same, and the next write or the drop records `done`
    /// again, or waits for the context, before anything trusts it). Returns the acquire's
    /// submit, which carried `after`'s work.
    pub(super) fn give_back(
        &mut self,
        stream: sys::CUstream,
        after: After,
    ) -> Result<Option<wgpu::SubmissionIndex>> {
        let signal = self.turn.next();
        let (semaphore, done) = (
            self.resources.held.cuda_timeline.raw,
            self.resources.done.raw(),
        );
        // Whether the signal was queued (and `done` after it), set inside the run: a run that
        // queued it may still return an error (its wait for the work gave up), and a value
        // once queued is never signalled again (`turn.rs`).
        let mut queued = None;
        // SAFETY: `stream` is of this context (checked at `write`), or null (the legacy stream
        // of the context, which `run_now` binds). In the work, `signal_then_mark`'s (1): the
        // private stream; the semaphore and the event are live (as in `write`); (2): nothing
        // waits for a value above `signal`, the turn's next.
        let ran = unsafe {
            self.ctx.run_now(
                stream,
                "cuSignalExternalSemaphoresAsync (not called)",
                |p| {
                    let marked = signal_then_mark(semaphore, done, signal, p)?;
                    queued = Some(marked.is_ok());
                    Ok(marked)
                },
            )
        };
        // Only once CUDA will signal: a wait for a value nothing signals would hang wgpu's queue.
        if let Some(marked) = queued {
            self.turn.signalled(signal, marked);
        }
        let marked = ran?;
        // A texture whose `done` must be recorded again is released only after that (the
        // recovery's first step): not with this hand-back.
        let after = if marked.is_ok() {
            after
        } else {
            after.without_release()
        };
        let index = self.acquire(after)?;
        marked.map_err(Error::from).map(|()| index)
    }

    /// Records `done` again after CUDA's last signal, which is queued on cuda-gl's private stream
    /// (every hand-off's CUDA side goes there), so a record there follows it. When even that cannot
    /// be recorded, waits for the whole context instead (at most the [wait
    /// limit](crate::wait_limit), 10 s by default): `done` then marks work that has all run.
    ///
    /// # Errors
    /// [`Error::Timeout`](crate::Error::Timeout) past the limit; the driver's errors.
    pub(super) fn mark_again(&mut self) -> Result<()> {
        let done = self.resources.done.raw();
        // SAFETY: the legacy stream handle of the context, which `run_now` binds; the event
        // lives as long as the resources.
        let marked = unsafe {
            self.ctx.run_now(
                std::ptr::null_mut(),
                "cuEventRecord (a shared texture's done, again)",
                |p| Ok(result::stream::event_record(done, p)?),
            )
        };
        if let Err(e) = marked {
            let limit = wait_limit();
            log::warn!(
                "cuda-gl: a shared texture's done event could not be recorded again ({e}); \
                 waiting for its context, at most {limit:?}"
            );
            self.ctx.synchronize_within(limit)?;
        }
        self.turn.marked();
        Ok(())
    }

    /// Submits the acquire of CUDA's queued signal (`self.turn.value`), with `after`'s work
    /// after it in the same submit, as [`acquire_all`] of this texture alone.
    pub(super) fn acquire(&mut self, after: After) -> Result<Option<wgpu::SubmissionIndex>> {
        acquire_all(std::array::from_mut(self), after)
    }

    /// Hands back an image that a write left CUDA's, first recording `done` again where it
    /// does not follow CUDA's last signal ([`mark_again`](Self::mark_again)):
    /// - [`Owner::Signalled`] (wgpu refused the acquire): the acquire is submitted again, and
    ///   wgpu's queue waits for CUDA's signal on the GPU; nothing waits on the CPU; the value is
    ///   never signalled again;
    /// - [`Owner::Cuda`] (a leaked guard, or a hand-off that failed half-way): waits for
    ///   wgpu's release signal (at most the [wait limit](crate::wait_limit): CUDA's next signal
    ///   must come after it; not when that signal is never made, see [`Step::SignalUnreleased`]),
    ///   then for the whole context (at most the wait limit: the leaked
    ///   guard's kernels may be on a stream that is gone), then gives the image back as a
    ///   finish would.
    ///
    /// # Errors
    /// wgpu's refusal of the acquire; [`Error::Timeout`](crate::Error::Timeout) past either
    /// limit; [`WgpuError::Vulkan`] from the wait for wgpu's signal; the driver's errors.
    pub(super) fn recover(&mut self) -> Result<()> {
        let plan = self.turn.recovery();
        if plan.mark {
            self.mark_again()?;
        }
        match plan.step {
            Step::Nothing => Ok(()),
            Step::Acquire => self.acquire(After::Nothing).map(drop),
            Step::Return => self.return_released(),
            step @ (Step::Signal | Step::SignalUnreleased) => {
                let limit = wait_limit();
                log::warn!(
                    "cuda-gl: a shared texture was left CUDA's (a leaked CudaWrite?); waiting for \
                     its context, at most {limit:?}, to recover"
                );
                // A release whose signal is never made is not waited for: nothing signals it,
                // and CUDA's signal below goes above it.
                if step == Step::Signal {
                    self.wait_for_release(limit)?;
                }
                self.ctx.synchronize_within(limit)?;
                self.give_back(std::ptr::null_mut(), After::Nothing)
                    .map(drop)
            }
        }
    }

    /// Waits on the CPU for wgpu's signal of `self.turn.value` (the release), at most `limit`.
    fn wait_for_release(&self, limit: Duration) -> Result<()> {
        let (semaphores, values) = ([self.resources.held.vk_timeline.raw], [self.turn.value]);
        let wait = vk::SemaphoreWaitInfo::default()
            .semaphores(&semaphores)
            .values(&values);
        let nanos = u64::try_from(limit.as_nanos()).unwrap_or(u64::MAX);
        // SAFETY: the semaphore is a live timeline semaphore of this device (Vulkan 1.2,
        // checked at creation); the wait info and its arrays outlive the call.
        match unsafe { self.ash.wait_semaphores(&wait, nanos) } {
            Ok(()) => Ok(()),
            // A timeout as every wait of cuda-gl's reports one (and a drop records it).
            Err(vk::Result::TIMEOUT) => Err(Error::Timeout {
                what: "wgpu's release of a shared texture (vkWaitSemaphores)".into(),
                timeout: limit,
            }),
            Err(e) => Err(WgpuError::Vulkan {
                call: "vkWaitSemaphores",
                result: format!("{e:?}"),
                help: "wgpu's queue did not reach the hand-off: the device may be lost",
            }
            .into()),
        }
    }

    /// Waits until CUDA is done with the texture: an image left CUDA's is recovered first, then
    /// CUDA's last hand-off is waited for, at most `limit`. A refused acquire (of an image whose
    /// CUDA signal is queued, with `done` after it) is only logged: `done` follows CUDA's side
    /// whatever wgpu does.
    ///
    /// # Errors
    /// As the recovery of a leaked guard, or of a `done` that could not be recorded after
    /// CUDA's last signal; [`Error::Timeout`](crate::Error::Timeout) past `limit`.
    pub(crate) fn wait_for_cuda(&mut self, limit: std::time::Duration) -> Result<()> {
        match self.recover() {
            Err(e) if self.turn.owner == Owner::Signalled && !self.turn.unmarked => {
                log::warn!("cuda-gl: a shared texture's hand-back to wgpu was refused again: {e}")
            }
            recovered => recovered?,
        }
        self.resources.done.wait_for(limit)
    }

    /// The drop's recovery; `false` when the resources must be leaked rather than released
    /// (CUDA may still use them, with work that `done` does not follow).
    pub(super) fn recover_for_drop(&mut self) -> bool {
        if self.turn.unmarked {
            // `done` does not follow CUDA's last signal: recorded again, or the resources are
            // leaked (the release waits only for `done`).
            let marked = self
                .ctx
                .bind_for_drop("record a shared texture's done again")
                && match self.mark_again() {
                    Ok(()) => true,
                    Err(e) => {
                        let what = "recording a shared texture's done again";
                        self.ctx.record_drop_wait(what, "cuCtxSynchronize", e);
                        false
                    }
                };
            if !marked {
                return false;
            }
        }
        match self.turn.owner {
            Owner::Wgpu => true,
            // Handed back on the GPU where it can be, so that wgpu's later uses of clones of the
            // texture find it wgpu's. Otherwise: where CUDA's wait was queued
            // but not its signal, recovered as a leaked write's (or leaked); where CUDA's
            // signal was queued, `done` follows it, and so the release; where nothing of
            // CUDA's was queued (a destroyed texture, no context), the release's signal, made
            // by a submit that names no texture, is waited for on the CPU before the semaphore
            // goes (or the resources are leaked).
            Owner::Ahead => {
                let returned = self.is_alive()
                    && self.ctx.bind_for_drop("hand a shared texture back to wgpu")
                    && match self.recover() {
                        Ok(()) => true,
                        Err(e) => {
                            self.ctx
                                .record_drop_error("handing a shared texture back to wgpu", e);
                            false
                        }
                    };
                returned
                    || match self.turn.owner {
                        Owner::Cuda => self.recover_leaked_for_drop(),
                        Owner::Wgpu => true,
                        // CUDA's signal is queued (wgpu refused its acquire): as below.
                        Owner::Signalled => self.acquire_for_drop(),
                        Owner::Ahead => match self.wait_for_release(wait_limit()) {
                            Ok(()) => true,
                            Err(e) => {
                                let what = "waiting for a shared texture's release";
                                self.ctx.record_drop_wait(what, "vkWaitSemaphores", e);
                                false
                            }
                        },
                    }
            }
            // The acquire orders wgpu's later uses of clones of the texture after CUDA (a
            // destroyed texture has none); CUDA's side is followed by `done` either way.
            Owner::Signalled => self.acquire_for_drop(),
            Owner::Cuda => self.recover_leaked_for_drop(),
        }
    }

    /// The drop's hand-back of an image whose CUDA signal is queued ([`Owner::Signalled`]):
    /// the acquire again, recording a refusal; always `true` (`done` follows CUDA's side).
    fn acquire_for_drop(&mut self) -> bool {
        if self.is_alive()
            && let Err(e) = self.acquire(After::Nothing)
        {
            self.ctx
                .record_drop_error("handing a shared texture back to wgpu", e);
        }
        true
    }

    /// The drop's recovery of an image left CUDA's ([`Owner::Cuda`]); `false` when it failed
    /// and the resources must be leaked.
    fn recover_leaked_for_drop(&mut self) -> bool {
        self.ctx.bind_for_drop("recover a leaked CudaWrite")
            && match self.recover() {
                Ok(()) => true,
                Err(e) => {
                    let what = "handing a leaked write back to wgpu";
                    self.ctx.record_drop_wait(what, RECOVERY_WAITS, e);
                    false
                }
            }
    }
}
