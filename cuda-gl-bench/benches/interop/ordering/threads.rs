//! The two-thread mechanism: a CUDA submission thread beside the GL thread (the one whose
//! context is current), with `mpsc` channels between them.

use super::{LIMIT, ROUND, Rig, drain, gl_fence, gl_fence_wait};
use crate::cases::FULL_HD;
use crate::external::FRAME_DT;
use crate::glres::{self, flush};
use crate::gpu::Gpu;
use anyhow::{Result, anyhow, bail, ensure};
use cuda_gl::{DevicePtr, Event, Function, LaunchConfig, Stream};
use std::collections::VecDeque;
use std::sync::mpsc;

/// Queues the plasma kernel into `out` on `stream`: the CUDA thread's launch, since
/// `Gpu::plasma_into` needs the `Gpu`, which holds the GL context and stays on the GL thread.
fn launch(kernel: &Function, stream: &Stream, out: DevicePtr<'_>, t: f32) -> Result<()> {
    let (w, h) = FULL_HD;
    // SAFETY: `out` is a pool slot of FULL_HD_BYTES = w * h * 4 bytes, which lives until the
    // group has drained; the arguments match `plasma_pbo(uchar4*, int, int, float)`, checked
    // by the launch against the PTX.
    unsafe {
        kernel.launch(
            LaunchConfig::for_image(w, h),
            stream,
            (out, w as i32, h as i32, t),
        )
    }?;
    Ok(())
}

/// One round with a CUDA submission thread and this (GL) thread: `slots` slots, GL waits for
/// the fence of its draw `slots / 2` frames later and then hands the slot back.
pub(super) fn threaded_round(gpu: &Gpu, r: &mut Rig<'_>, slots: usize) -> Result<()> {
    let events = &r.thread_events[..slots];
    let ptrs: Vec<DevicePtr<'_>> = r.slots[..slots]
        .iter()
        .map(|s| s.mem.device_ptr())
        .collect::<cuda_gl::Result<_>>()?;
    let (ready_tx, ready_rx) = mpsc::channel::<usize>();
    let (free_tx, free_rx) = mpsc::channel::<usize>();
    let (kernel, stream, ctx, t0) = (&gpu.plasma_pbo, &gpu.stream, &gpu.ctx, r.frames.t);
    let t = std::thread::scope(|scope| {
        let cuda = scope.spawn(move || -> Result<f32> {
            ctx.bind()?;
            let mut t = t0;
            for n in 0..ROUND {
                if n >= slots {
                    let freed = free_rx
                        .recv_timeout(LIMIT)
                        .map_err(|e| anyhow!("the GL thread did not free a slot: {e}"))?;
                    ensure!(
                        freed == n - slots,
                        "slot of frame {freed} freed, not {}",
                        n - slots
                    );
                }
                t += FRAME_DT;
                launch(kernel, stream, ptrs[n % slots], t)?;
                events[n % slots].record(stream)?;
                if ready_tx.send(n).is_err() {
                    bail!("the GL thread stopped");
                }
            }
            Ok(t)
        });
        let gl_side = threaded_gl(r, events, slots, &ready_rx, free_tx);
        let cuda = cuda
            .join()
            .map_err(|_| anyhow!("the CUDA submission thread panicked"))?;
        gl_side.and(cuda)
    })?;
    r.frames.t = t;
    drain(gpu, &r.done)
}

/// The GL thread's side of [`threaded_round`]; dropping `free` on return ends the CUDA thread.
fn threaded_gl(
    r: &Rig<'_>,
    events: &[Event],
    slots: usize,
    ready: &mpsc::Receiver<usize>,
    free: mpsc::Sender<usize>,
) -> Result<()> {
    let slack = slots / 2;
    let mut fences = VecDeque::new();
    for m in 0..ROUND {
        let n = ready
            .recv_timeout(LIMIT)
            .map_err(|e| anyhow!("the CUDA thread sent no frame: {e}"))?;
        ensure!(n == m, "frame {n} arrived, not {m}");
        events[n % slots].wait_for(LIMIT)?;
        r.frames.draw.draw(&r.tbos[n % slots]);
        fences.push_back((n, gl_fence()));
        flush();
        while fences.len() > slack {
            if let Some((f, sync)) = fences.pop_front() {
                gl_fence_wait(sync)?;
                let _ = free.send(f); // The CUDA thread may be done: later slots are not needed.
            }
        }
    }
    for (_, sync) in fences {
        gl_fence_wait(sync)?;
    }
    glres::check("the threaded round")
}
