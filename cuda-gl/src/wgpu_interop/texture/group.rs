//! Hand-offs of several [`SharedTexture`]s at once: one release and one acquire carry every
//! texture's barriers and semaphore operations (the hand-off's notes), and CUDA's side of a
//! write made of copies is one join of cuda-gl's private stream: the wait for every texture,
//! the copies, then each texture's signal. A video frame's two planes then cost the submits and
//! the joins of one hand-off, not two (`release_all` and `acquire_all` are also the one-texture
//! path's, with one texture).
//!
//! Each texture keeps its own semaphore, value and [`Owner`]: a hand-off of the group moves
//! each as a hand-off of it alone would, and whatever fails half-way leaves each texture in a
//! state that a write of it alone can leave, which its own recovery handles (`recovery.rs`).

use super::SharedTexture;
use super::turn::Owner;
use crate::error::{Error, Result};
use crate::result;
use crate::stream::{AsStream, check_same_context, refuse_capturing};
use crate::wgpu_interop::handoff::{Handoff, Part};
use cuda_gl_sys as sys;

/// Refuses textures that cannot be handed over together: of another CUDA context, wgpu device
/// or queue than the first one's (their hand-offs would go on other queues).
fn check_group<const N: usize>(textures: &[SharedTexture; N]) -> Result<()> {
    let Some(lead) = textures.first() else {
        return Ok(());
    };
    let together = textures
        .iter()
        .all(|t| t.ctx.raw() == lead.ctx.raw() && t.device == lead.device && t.queue == lead.queue);
    if together {
        Ok(())
    } else {
        Err(Error::Internal {
            what: "shared textures of different CUDA contexts, wgpu devices or queues handed \
                   over together"
                .into(),
        })
    }
}

/// The hand-off of `textures` (of one group), each at its value of `values`, on the first one's
/// device and queue; `None` for no texture.
fn handoff<const N: usize>(
    textures: &[SharedTexture; N],
    values: [u64; N],
) -> Option<Handoff<'_, N>> {
    let lead = textures.first()?;
    Some(lead.handoff_of(std::array::from_fn(|i| textures[i].part(values[i]))))
}

/// wgpu to CUDA, for textures of one group that are alive and wgpu's: the release of each at
/// its next value, in one hand-off (one submit of every barrier, one of every signal). Returns
/// the values released at. Each texture is [`Owner::Cuda`] at its value from the moment the
/// barriers' submit is accepted, whatever fails after (a value whose signal is never made is
/// marked so, and the recovery signals above it without waiting for it).
///
/// # Errors
/// As [`Handoff::release`](crate::wgpu_interop::handoff::Handoff::release); when the barriers'
/// submit is refused, nothing was released and the textures are as they were.
pub(super) fn release_all<const N: usize>(textures: &mut [SharedTexture; N]) -> Result<[u64; N]> {
    let values = textures.each_ref().map(|t| t.turn.next());
    let (mut released, mut unsignalled) = (false, [false; N]);
    let handed = handoff(textures, values).map_or(Ok(()), |handoff| {
        handoff.release(&mut released, &mut unsignalled)
    });
    if released {
        mark_released(textures, values, unsignalled);
    }
    handed.map(|()| values)
}

/// The values that the CUDA waits of a hand-off of textures of one group wait for
/// ([`SharedTexture::copy_in_together`], and a write of one texture): the releases made ahead
/// by the last hand-back, each taken with no submit of wgpu's, when every texture is
/// [`Owner::Ahead`]; otherwise each texture recovered (an image released ahead is handed back
/// first), then one release of all. From here every texture is CUDA's, also when the caller's
/// waits are not queued (its next write or drop recovers it).
///
/// # Errors
/// As `recover`, `mark_again` and [`release_all`].
pub(super) fn release_all_for_write<const N: usize>(
    textures: &mut [SharedTexture; N],
) -> Result<[u64; N]> {
    if textures.iter().all(|t| t.turn.owner == Owner::Ahead) {
        // Every `done` first, then every take: a failed record leaves each texture released
        // ahead, which its recovery returns on the GPU.
        for texture in textures.iter_mut().filter(|t| t.turn.unmarked) {
            texture.mark_again()?;
        }
        for texture in textures.iter_mut() {
            texture.turn.taken();
        }
        return Ok(textures.each_ref().map(|t| t.turn.value));
    }
    for texture in textures.iter_mut() {
        texture.recover()?;
    }
    release_all(textures)
}

/// The second half of a release whose barriers the accepted submit `after` carries (an
/// acquire's, [`After::UseThenRelease`]): each texture is [`Owner::Cuda`] at its next value,
/// whose signal is then made (by an empty submit, or from the host), as in [`release_all`].
///
/// # Errors
/// As [`Handoff::signal_release`](crate::wgpu_interop::handoff::Handoff::signal_release): the
/// textures are released all the same, at values that are never signalled.
fn signal_released<const N: usize>(
    textures: &mut [SharedTexture; N],
    after: wgpu::SubmissionIndex,
) -> Result<()> {
    let values = textures.each_ref().map(|t| t.turn.next());
    let mut unsignalled = [false; N];
    let handed = handoff(textures, values).map_or(Ok(()), |handoff| {
        handoff.signal_release(after, &mut unsignalled)
    });
    mark_released(textures, values, unsignalled);
    handed
}

/// Each texture released at its value, and marked where that value is never signalled.
fn mark_released<const N: usize>(
    textures: &mut [SharedTexture; N],
    values: [u64; N],
    unsignalled: [bool; N],
) {
    for ((texture, value), unsignalled) in textures.iter_mut().zip(values).zip(unsignalled) {
        texture.turn.released(value);
        if unsignalled {
            texture.turn.never_signalled();
        }
    }
}

/// What a hand-back's submit carries after the acquire.
pub(super) enum After {
    /// Nothing.
    Nothing,
    /// Work of the textures' device that uses them.
    Use(wgpu::CommandBuffer),
    /// That work, then the release of each texture to CUDA ahead of its next write (as
    /// [`SharedTexture::release_ahead`]): its barriers in the same submit, its signals in an
    /// empty one after it, two submits where a hand-back and a release make three. Only for
    /// textures that no wgpu command but this work uses until their next write
    /// (`release_ahead`'s (1)).
    UseThenRelease(wgpu::CommandBuffer),
}

impl After {
    /// The same, without the release: for a hand-back after which the release waits (a
    /// texture whose `done` must be recorded again first, as the recovery's first step).
    pub(super) fn without_release(self) -> After {
        match self {
            After::UseThenRelease(then) => After::Use(then),
            after => after,
        }
    }
}

/// CUDA to wgpu, for textures of one group whose CUDA signal of their value is queued
/// ([`Owner::Signalled`]): the acquire of each in one submit, with `after`'s work after it.
/// When wgpu refuses that submit and work was given (a copy into a texture that the application
/// destroyed, which wgpu 30 refuses at the submit), the acquire alone is submitted again at
/// once: the images are then wgpu's, and the refusal is still returned. With
/// [`After::UseThenRelease`], once that submit is accepted with the release's barriers each
/// texture is released at its next value and, once its signal is made, [`Owner::Ahead`]; a
/// signal that could not be made, or a release that wgpu refused to record (the acquire then
/// goes without it, and the textures stay wgpu's), is logged, not returned (the frame was
/// handed back; the next write recovers or releases the image). Returns the submit that
/// carried `after`'s work (`None` for a group of none, which hands nothing over).
///
/// # Errors
/// As [`Handoff::acquire`](crate::wgpu_interop::handoff::Handoff::acquire): when refused
/// (again), the textures stay [`Owner::Signalled`], for their recovery.
pub(super) fn acquire_all<const N: usize>(
    textures: &mut [SharedTexture; N],
    after: After,
) -> Result<Option<wgpu::SubmissionIndex>> {
    let values = textures.each_ref().map(|t| t.turn.value);
    let Some(handoff) = handoff(textures, values) else {
        return Ok(None);
    };
    let alone_after = !matches!(after, After::Nothing);
    let acquired = match after {
        After::Nothing => handoff.acquire(None).map(|index| (index, false)),
        After::Use(then) => handoff.acquire(Some(then)).map(|index| (index, false)),
        After::UseThenRelease(then) => handoff.acquire_then_release(then),
    };
    let back = match &acquired {
        Ok(_) => true,
        Err(e) if alone_after => {
            log::warn!("cuda-gl: a shared texture's hand-back was refused ({e}); again alone");
            handoff.acquire(None).is_ok()
        }
        Err(_) => false,
    };
    if back {
        for texture in textures.iter_mut() {
            texture.turn.acquired();
        }
    }
    let (index, released) = acquired?;
    if released {
        match signal_released(textures, index.clone()) {
            Ok(()) => textures.iter_mut().for_each(|t| t.turn.released_ahead()),
            Err(e) => log::warn!(
                "cuda-gl: releasing a shared texture to CUDA ahead of its next write: {e}"
            ),
        }
    }
    Ok(Some(index))
}

/// CUDA's side of a hand-back, queued on stream `p`: the signal of `value`, then `done` after
/// it. `Err` when the signal was not queued; `Ok` once it was, with the outcome of `done`'s
/// record: a signal once queued is never made again (see `turn.rs`), whatever that says.
///
/// # Safety
/// 1. `p` is a live stream of the bound context, `semaphore` a live external semaphore and
///    `done` a live event of that context, which outlive the work queued here.
/// 2. Nothing waits for a value above `value` on the semaphore, and no value at or above it
///    was signalled.
pub(super) unsafe fn signal_then_mark(
    semaphore: sys::CUexternalSemaphore,
    done: sys::CUevent,
    value: u64,
    p: sys::CUstream,
) -> result::Result<result::Result<()>> {
    // SAFETY: (1) and (2).
    unsafe { result::external::signal_semaphore(semaphore, value, p) }?;
    // SAFETY: (1).
    Ok(unsafe { result::stream::event_record(done, p) })
}

impl SharedTexture {
    /// The texture's part of a hand-off that signals or waits for `value`.
    pub(super) fn part(&self, value: u64) -> Part<'_> {
        Part {
            texture: &self.texture,
            image: self.resources.held.vk_image.image,
            semaphore: self.resources.held.vk_timeline.raw,
            value,
        }
    }

    /// The hand-off of `parts` on this texture's device and queue: this texture's, or those of
    /// a group of textures of this one's context, device and queue ([`check_group`]).
    pub(super) fn handoff_of<'a, const N: usize>(&'a self, parts: [Part<'a>; N]) -> Handoff<'a, N> {
        Handoff {
            device: &self.device,
            queue: &self.queue,
            ash: &self.ash,
            family: self.family,
            parts,
        }
    }

    /// The copy into the whole image of rows `pitch` bytes apart from `src` (each of its rows,
    /// row 0 first, from one row of `src`): the descriptor, checked, not queued.
    ///
    /// # Errors
    /// `Error::Internal` for a pitch shorter than a row.
    pub(super) fn copy_in(
        &self,
        src: sys::CUdeviceptr,
        pitch: usize,
    ) -> Result<sys::CUDA_MEMCPY2D> {
        let (width, height) = self.size;
        let row = width as usize * self.format.bytes_per_texel() as usize;
        self.resources
            .held
            .cuda_image
            .copy_in(src, pitch, (row, height))
    }

    /// Writes each of `textures` with a copy of its `(address, pitch)` of `sources` (as
    /// [`CudaWrite::copy_from_pitched`](super::CudaWrite::copy_from_pitched)), in `stream`'s
    /// order, in one hand-off: the release of every texture (made ahead by the last call's
    /// hand-back, or one now after wgpu's uses so far), one join of cuda-gl's private stream to
    /// `stream` in which CUDA waits for every release, copies each source and signals each
    /// texture, and one acquire of every texture, with `then` (work of the textures' device that
    /// uses them: the copies into the textures the application samples) after it in the same
    /// submit, and the release of every texture ahead of the next call after `then` (as
    /// [`After::UseThenRelease`]): two wgpu submits a call, no CPU wait.
    ///
    /// When a copy or a signal cannot be queued, each texture whose signal was queued is handed
    /// back alone, without `then`, and the others stay CUDA's until their next write or drop
    /// recovers them (as a write of one texture whose guard failed).
    ///
    /// # Safety
    /// 1. No wgpu command ever uses the textures but `then`, which this call submits after the
    ///    acquire (textures that are never handed out): each is CUDA's from this call until it
    ///    returns `Ok`, after an error until a later write of it returns `Ok`, and after `Ok`
    ///    until the next call's hand-back (released ahead, as [`SharedTexture::release_ahead`]'s
    ///    (1)).
    /// 2. Each source holds its texture's rows at its pitch (`pitch * (height - 1) + width *
    ///    bytes per texel` bytes), in device memory of the textures' CUDA context that stays
    ///    allocated and unwritten until the work queued on `stream` before this returns has
    ///    run.
    ///
    /// # Errors
    /// `Error::Internal` for textures of different contexts, devices or queues, or a pitch
    /// shorter than its texture's row (both before anything is handed over); as
    /// [`SharedTexture::write`] (the recovery of a texture that an earlier call left CUDA's
    /// included) and [`CudaWrite::finish_then_release`](super::CudaWrite::finish_then_release);
    /// the driver's errors from the wait, the copies and the signals.
    pub(crate) unsafe fn copy_in_together<const N: usize>(
        textures: &mut [SharedTexture; N],
        sources: [(sys::CUdeviceptr, usize); N],
        stream: &impl AsStream,
        then: wgpu::CommandBuffer,
    ) -> Result<()> {
        const CALL: &str = "cuda_gl::wgpu_interop::SharedTexture::write";
        // Checked when the function is instantiated: a group of none would drop `then`.
        const { assert!(N > 0) };
        check_group(textures)?;
        let Some(lead) = textures.first() else {
            return Ok(());
        };
        let ctx = lead.ctx.clone();
        check_same_context(&ctx, stream, "the shared texture")?;
        refuse_capturing(&ctx, stream, CALL)?;
        let mut copies = [sys::CUDA_MEMCPY2D::default(); N];
        for ((copy, texture), (src, pitch)) in copies.iter_mut().zip(&*textures).zip(sources) {
            *copy = texture.copy_in(src, pitch)?;
            texture.check_alive()?;
        }
        let released = release_all_for_write(textures)?;
        // Each texture's CUDA semaphore and `done` event.
        let cuda = textures.each_ref().map(|t| {
            let held = &t.resources.held;
            (held.cuda_timeline.raw, t.resources.done.raw())
        });
        // Per texture: `None` when its signal was not queued, `Some(marked)` once it was.
        let mut signalled: [Option<bool>; N] = [None; N];
        // SAFETY: `run_now`'s (1): the stream is live while borrowed and of the textures'
        // context (checked). In the work, queued on the private stream in this order:
        // 1. the wait (`wait_semaphores`' (1)): wgpu signals each released value (its release
        //    was accepted above, or by the last call's hand-back: `Owner::Ahead`, its signal
        //    made or submitted); each semaphore lives as long as its texture's resources,
        //    which outlive the private stream's use of it (`done`, recorded after its signal
        //    below, is waited for before they go);
        // 2. the copies (`copy_2d_async`'s (1)): each source's rows are this function's (2);
        //    each array is its image's level 0, of the rows that `copy_in` copies, CUDA's from
        //    the wait before it until the signal after it (this function's (1): no wgpu command
        //    uses it meanwhile), and alive until then (`done` follows the signal);
        // 3. the signals (`signal_then_mark`'s (1) as for the wait; (2): nothing waits for a
        //    value above `released + 1`, the turn's next, and each texture's signal follows its
        //    wait); that of a texture whose copy failed hands its image back as the drop of a
        //    failed write's guard does.
        let queued = unsafe {
            ctx.run_now(
                stream.raw_stream(),
                "cuWaitExternalSemaphoresAsync (not called)",
                |p| {
                    // On an error any of the waits may be queued: then no texture is signalled,
                    // and each stays CUDA's, which its recovery handles whether or not its wait
                    // was queued (it waits for wgpu's signal, then for the context).
                    let waits: [_; N] = std::array::from_fn(|i| (cuda[i].0, released[i]));
                    result::external::wait_semaphores(waits, p)?;
                    let copied = copies
                        .iter()
                        .try_for_each(|copy| result::array::copy_2d_async(copy, p));
                    let mut failed = copied.err();
                    // One call per semaphore, so that each texture whose signal was queued is
                    // known: a value once queued is never signalled again (the recovery of a
                    // texture left CUDA's signals its next value), also when only recording
                    // `done` after it failed.
                    for (((semaphore, done), value), signalled) in
                        cuda.into_iter().zip(released).zip(&mut signalled)
                    {
                        match signal_then_mark(semaphore, done, value + 1, p) {
                            Ok(marked) => {
                                *signalled = Some(marked.is_ok());
                                failed = failed.or(marked.err());
                            }
                            Err(e) => {
                                failed.get_or_insert(e);
                            }
                        }
                    }
                    failed.map_or(Ok(()), |e| Err(e.into()))
                },
            )
        };
        for ((texture, value), signalled) in textures.iter_mut().zip(released).zip(signalled) {
            if let Some(marked) = signalled {
                // Only once CUDA will signal: a wait for a value nothing signals would hang
                // wgpu's queue.
                texture.turn.signalled(value + 1, marked);
            }
        }
        if let Err(e) = queued {
            for texture in textures.iter_mut() {
                if texture.turn.owner == Owner::Signalled
                    && let Err(again) = acquire_all(std::array::from_mut(texture), After::Nothing)
                {
                    log::warn!("cuda-gl: a shared texture's hand-back was refused: {again}");
                }
            }
            return Err(e);
        }
        acquire_all(textures, After::UseThenRelease(then)).map(drop)
    }
}
