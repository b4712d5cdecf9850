//! A whole map, write and unmap of images queued on cuda-gl's private stream in one run, joined
//! to the caller's stream once: for an upload that cuda-gl makes from start to end inside one
//! call (a video frame's planes), where no view of the mapping reaches the caller.
//!
//! Why: mapped on the caller's stream with each copy on the private stream (a join per copy),
//! GL's first use of the planes waited about 2.7 ms, against 0.67 ms with the map, the copies
//! and the unmap all on one stream (`ci/gpu/probes/planes_probe.py`, NVIDIA H100, driver
//! 580.159.04, 2026-12-07, at 1080p and 2160p alike): the driver orders GL after every stream
//! that touched the mapping.

use super::array::{MappedArray, mapped_array};
use super::batch::prepare_batch;
use super::registration::mapping_state_lost;
use super::{RegisteredImage, Registration, unmap_error};
use crate::error::Result;
use crate::result;
use crate::stream::AsStream;
use cuda_gl_sys as sys;

/// Maps `images` together, hands `work` the array of each one's index 0, level 0 and the
/// private stream, then unmaps them: the map, `work`'s copies and the unmap are queued on
/// cuda-gl's private stream in one run, after the work queued on `stream` so far, and the work
/// queued on `stream` later waits for them (see [`crate::queue`]). GL's commands issued in the
/// images' context after this returns see what `work` wrote (the unmap orders them after it).
///
/// `work` runs inside the run: it queues with raw driver calls on the stream it is given, and
/// must not call anything that queues through the private queue itself (a run does not nest).
/// The arrays' own copy methods queue through the private queue: `work` uses
/// [`MappedArray::pitched_copy`] and queues the copy itself. The map and the unmap run under
/// the private queue's lock, so another thread's cuda-gl call in the context that queues
/// through it waits for them (a map waits for GL on the CPU at most as long as GL's own work).
/// When `work` fails the images are still unmapped; when the unmap fails they stay marked
/// mapped, and their next map or unregister recovers them.
///
/// # Errors
/// As [`map_all`](super::map_all)'s checks and map (the images' GL context not current, a
/// stream of another context or capturing, another context's images); the driver's errors
/// from the map, the arrays and the unmap; `work`'s.
pub(crate) fn on_private_stream<const N: usize, T>(
    images: [&mut RegisteredImage; N],
    stream: &impl AsStream,
    call: &'static str,
    work: impl FnOnce([MappedArray<'_>; N], sys::CUstream) -> Result<T>,
) -> Result<T> {
    let mut regs: [&mut Registration; N] = images.map(|image| image.registration());
    let ctx = prepare_batch(&mut regs, stream)?;
    let (first_name, first_kind) = (regs[0].name, regs[0].kind);
    let mut raws: [sys::CUgraphicsResource; N] = regs.each_ref().map(|r| r.raw);
    let queued = |p: sys::CUstream| -> Result<T> {
        // SAFETY: registered in the bound context and unmapped (recovered by `prepare_map`),
        // their GL context current (checked there); `p` is the live private stream.
        unsafe { Registration::map_raw(&mut raws, p) }
            .map_err(|e| mapping_state_lost(e, first_name, first_kind))?;
        for r in regs.iter_mut() {
            r.mapped = true;
            r.retired.mapped();
        }
        let out = {
            let arrays: Result<Vec<MappedArray<'_>>> =
                regs.iter().map(|r| mapped_array(r, p, 0, 0)).collect();
            arrays.and_then(|arrays| {
                let arrays: [MappedArray<'_>; N] =
                    arrays
                        .try_into()
                        .map_err(|_| crate::error::Error::Internal {
                            what: "an array per mapped image".into(),
                        })?;
                work(arrays, p)
            })
        };
        // SAFETY: mapped together on `p` above; the arrays handed to `work` are gone.
        match unsafe { result::graphics::unmap(&mut raws, p) } {
            Ok(()) => {
                for r in regs.iter_mut() {
                    // SAFETY: the private stream of the bound context, inside this run; the
                    // unmap just queued there succeeded.
                    unsafe { unmapped_on_private(r, p) };
                }
                out
            }
            // Still marked mapped: the next map or unregister recovers them.
            Err(e) => out.and(Err(unmap_error(e))),
        }
    };
    // SAFETY: `stream` is live while borrowed and of the images' context (checked by
    // `prepare_map`).
    unsafe { ctx.run_now(stream.raw_stream(), call, queued) }
}

/// `Registration::unmapped` after an unmap queued on cuda-gl's private stream `private`, inside
/// a run of the private queue.
///
/// # Safety
/// 1. `private` is the live private stream of the registration's context, bound, inside a run,
///    and the unmap just queued there succeeded.
unsafe fn unmapped_on_private(reg: &mut Registration, private: sys::CUstream) {
    reg.mapped = false;
    let cached = !reg.surfaces.is_empty();
    // SAFETY: (1).
    unsafe { reg.retired.unmapped_on_private(&reg.ctx, private, cached) };
}
