//! External memory's waits for the GPU give up after the wait limit (`cuda_gl::wait_limit`: 10 s by
//! default, 3 s under `ci/gpu/suite.sh`) with `Error::Timeout` while a kernel keeps the work they
//! wait for from finishing (a kernel spinning past the limit, then writing the memory), and a drop
//! that gives up leaks the CUDA memory, never unmaps it under the kernel, and records the timeout
//! for `Context::check_drop_errors`: the ring's recovery of a leaked `CudaWrite` and its read's
//! wait for CUDA's writes, the ring's, the frame stream's and `ExportableMemory`'s drops (two drops
//! behind one kernel taking one limit), and the import check (which, made after a drop gave up on
//! the same kernel, still waits its own limit for it). Before, each waited with no limit
//! (`cuCtxSynchronize`, `cuEventSynchronize`): the whole spin here, for ever behind a kernel that
//! never ends. New exportable memory is zeroed without waiting for a kernel on a blocking stream.
//! (The other bounded waits: `bounded_waits`.)
//!
//! Needs `--features egl` and a GPU; skips with the reason elsewhere.
#![cfg(all(feature = "egl", unix))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::gpu::external::{gl_view, gpu_and_gl};
use crate::gpu::{
    Busy, Gpu, assert_drop_gives_up, assert_gave_up, assert_gave_up_in_drop, assert_took_the_limit,
    delete_buffer, gl_buffer, pattern_words, spin_into, spin_past_the_limit,
};
use cuda_gl::external::{
    CudaWrite, ExportableMemory, ExternalGl, ExternalRing, FrameRead, FrameStream, FrameWrite,
    GlMemoryBuffer,
};
use cuda_gl::{Error, Event};
use std::time::Instant;

/// Words per slot: one block of the spinning kernel.
const WORDS: usize = 256;
const BYTES: usize = WORDS * 4;
/// The seed of the pattern `ext_fill_u32_slow` writes (`launch_spin`'s).
const SEED: u32 = 1;

/// What the ring's drop and the frame stream's name as the waits that gave up.
const SLOT_WAITS: &str = "cuEventQuery, glClientWaitSync or cuCtxSynchronize";

/// GL's view of the first WORDS words of imported buffer `buffer` (through a GPU copy).
fn gl_words(buffer: u32) -> Vec<u32> {
    let scratch = gl_buffer(BYTES, None);
    let words = gl_view(buffer, scratch, WORDS);
    delete_buffer(scratch);
    words
}

/// A ring of 2 slots (GL's context current) whose slot 0 a kernel spins writing, queued on the
/// test's stream through a `CudaWrite` that `leave` ends (finished, or leaked), and the event
/// after the kernel.
fn ring_written_by_a_spinning_kernel(
    g: &Gpu,
    gl: &ExternalGl,
    leave: impl FnOnce(CudaWrite<'_>),
) -> (ExternalRing, Event) {
    let mut ring = ExternalRing::new(&g.ctx, gl, 2, BYTES).unwrap();
    // The ring's own waits (10 s by default) give up at the wait limit too, as its recoveries do.
    ring.set_timeout(cuda_gl::wait_limit());
    let write = ring.write(0, &g.stream).unwrap();
    // SAFETY: the slot holds WORDS words; the ring keeps it allocated until its drop has waited
    // for the context, or leaks it.
    let end = unsafe { spin_into(g, write.device_ptr(), WORDS) };
    leave(write);
    (ring, end)
}

/// Reads slot 0 of `ring` while the kernel that `end` follows spins writing it: the read (named
/// `what`) gives up after the wait limit; once the kernel has ended, the next read shows GL its
/// words.
fn a_read_gives_up_then_shows_the_kernels_words(
    g: &Gpu,
    mut ring: ExternalRing,
    end: &Event,
    what: &str,
) {
    let start = Instant::now();
    let read = ring.read(0).map(drop);
    assert_gave_up(read, start.elapsed(), what);
    assert!(
        !end.query().unwrap(),
        "the kernel ended before {what} gave up"
    );
    g.stream.synchronize().unwrap();
    let read = ring.read(0).unwrap();
    assert_eq!(
        gl_words(read.buffer().0),
        pattern_words(WORDS, SEED),
        "after {what}: GL does not read what the kernel wrote"
    );
    read.finish().unwrap();
    drop(ring);
    g.check_no_errors();
}

/// A `CudaWrite` leaked (`mem::forget`, safe) while its kernel spins: the read of the slot recovers
/// by waiting for the whole context, gives up after the wait limit (the slot stays marked), and
/// recovers once the kernel has ended.
#[test]
fn a_leaked_cuda_writes_recovery_gives_up_after_ten_seconds() {
    let Some((g, gl)) = gpu_and_gl() else { return };
    let (ring, end) = ring_written_by_a_spinning_kernel(&g, &gl, |w| std::mem::forget(w));
    a_read_gives_up_then_shows_the_kernels_words(&g, ring, &end, "the read after a leak");
}

/// The read of a slot whose finished write's kernel spins waits for the slot's event at most
/// the ring's timeout (set to the wait limit here: the ring's own default is 10 s whatever the
/// limit), and leaves the write pending: the next read waits again.
#[test]
fn a_reads_wait_for_cudas_writes_gives_up_after_the_rings_timeout() {
    let Some((g, gl)) = gpu_and_gl() else { return };
    let (ring, end) = ring_written_by_a_spinning_kernel(&g, &gl, |w| w.finish().unwrap());
    a_read_gives_up_then_shows_the_kernels_words(&g, ring, &end, "the read behind the kernel");
}

/// The ring's drop behind a finished write whose kernel spins: it gives up after the wait limit,
/// leaks the slots' CUDA memory (the kernel then writes it unharmed) and records the timeout.
#[test]
fn a_rings_drop_behind_a_spinning_write_gives_up_after_ten_seconds_and_leaks_its_memory() {
    let Some((g, gl)) = gpu_and_gl() else { return };
    let (ring, end) = ring_written_by_a_spinning_kernel(&g, &gl, |w| w.finish().unwrap());
    assert_drop_gives_up(&g, ring, &end, "the ring's drop", &[SLOT_WAITS]);
}

/// The frame stream's drop behind a pushed frame whose producer's kernel spins: it gives up after
/// the stream's timeout (set to the wait limit), leaks the slots' CUDA memory rather than wait for
/// the context once more per slot, and records the timeout.
#[test]
fn a_frame_streams_drop_behind_a_spinning_producer_gives_up_after_ten_seconds() {
    let Some((g, gl)) = gpu_and_gl() else { return };
    let mut stream = FrameStream::new(&g.ctx, &gl, BYTES, 2, 1).unwrap();
    stream.set_timeout(cuda_gl::wait_limit());
    let mut end = None;
    stream
        .push_burst(
            &g.stream,
            &mut |w: &FrameWrite<'_>| {
                // SAFETY: the slot holds WORDS words; the stream keeps it allocated until its
                // drop has waited for the slot's event, recorded after this launch (or leaks it).
                end = Some(unsafe { spin_into(&g, w.device_ptr(), WORDS) });
                Ok::<(), Error>(())
            },
            &mut |_: &FrameRead| Ok(()),
        )
        .unwrap();
    let end = end.expect("the producer ran");
    assert_drop_gives_up(&g, stream, &end, "the frame stream's drop", &[SLOT_WAITS]);
}

/// `ExportableMemory`'s drop while a kernel spins writing it: it waits for the context at most
/// the wait limit, then leaks the memory (the kernel writes it unharmed) and records the timeout.
#[test]
fn exportable_memorys_drop_behind_a_spinning_kernel_gives_up_after_ten_seconds() {
    let Some(g) = crate::gpu::gpu() else { return };
    let memory = ExportableMemory::new(&g.ctx, BYTES).unwrap();
    // SAFETY: the allocation holds WORDS words; its drop waits for the context or leaks it.
    let end = unsafe { spin_into(&g, memory.device_ptr().unwrap(), WORDS) };
    assert_drop_gives_up(&g, memory, &end, "the memory's drop", &["cuCtxSynchronize"]);
}

/// Two drops behind the same spinning kernel take one limit, not two: the second one's wait for
/// the context gives up after 100 ms, since the first one's still waits. Once the kernel has
/// ended, a drop waits and releases as before.
#[test]
fn drops_behind_one_spinning_kernel_take_one_limit_together() {
    let Some(g) = crate::gpu::gpu() else { return };
    let first = ExportableMemory::new(&g.ctx, BYTES).unwrap();
    let second = ExportableMemory::new(&g.ctx, BYTES).unwrap();
    // SAFETY: as above.
    let end = unsafe { spin_into(&g, first.device_ptr().unwrap(), WORDS) };
    let waits = ["cuCtxSynchronize", "cuCtxSynchronize"];
    assert_drop_gives_up(&g, (first, second), &end, "the two drops", &waits);
    drop(ExportableMemory::new(&g.ctx, BYTES).unwrap());
    g.check_no_errors();
}

/// A call's wait for the context is not cut short by a drop's that gave up on the same work: behind
/// a kernel spinning past the wait limit, an `ExportableMemory`'s drop gives up after the limit
/// (and leaks it), and an import made right after waits for the kernel, which ends `spin_margin`
/// (at most half the limit) later, within the import's own limit, and succeeds. (Before, every wait
/// for the context gave up after 100 ms while the drop's still waited: the import failed with
/// `Error::Timeout` although its work ended in time.)
#[test]
fn a_call_after_a_drop_gave_up_waits_for_the_same_kernel_within_its_own_limit() {
    let Some((g, gl)) = gpu_and_gl() else { return };
    let memory = ExportableMemory::new(&g.ctx, BYTES).unwrap();
    let doomed = ExportableMemory::new(&g.ctx, BYTES).unwrap();
    // SAFETY: the allocation holds WORDS words; its drop waits for the context or leaks it.
    let end = unsafe { spin_into(&g, doomed.device_ptr().unwrap(), WORDS) };
    let start = Instant::now();
    drop(doomed);
    assert_took_the_limit(start.elapsed(), "the memory's drop");
    assert!(
        !end.query().unwrap(),
        "the kernel ended before the drop gave up"
    );
    let start = Instant::now();
    let imported = GlMemoryBuffer::import(&gl, &memory);
    let took = start.elapsed();
    println!("the import after the drop took {took:?}");
    let imported = imported.unwrap_or_else(|e| panic!("the import after {took:?}: {e}"));
    assert!(
        end.query().unwrap(),
        "the import did not wait for the kernel"
    );
    assert_gave_up_in_drop(&g.ctx, &["cuCtxSynchronize"]);
    drop(imported);
    drop(memory);
    g.check_no_errors();
}

/// The import check waits for the CUDA context's work before it borrows the memory's first bytes,
/// at most the wait limit: behind unrelated work that spins it gives up having copied nothing, and
/// once that work has ended the import succeeds.
#[test]
fn an_imports_check_gives_up_after_ten_seconds_behind_a_spinning_kernel() {
    let Some((g, gl)) = gpu_and_gl() else { return };
    let memory = ExportableMemory::new(&g.ctx, BYTES).unwrap();
    let busy = Busy::new(&g.ctx);
    busy.start(&g.kernels, spin_past_the_limit());
    let start = Instant::now();
    let imported = GlMemoryBuffer::import(&gl, &memory).map(drop);
    assert_gave_up(
        imported,
        start.elapsed(),
        "the import behind a spinning kernel",
    );
    assert!(busy.running(), "the kernel ended before the import gave up");
    busy.wait();
    assert_imports_as_zeros(
        &g,
        &gl,
        memory,
        "the check did not put the memory's first bytes back",
    );
}

/// Imports `memory` into GL once nothing spins any more, asserts that GL reads zeros through it
/// (`why` says what else it means), then drops both and checks that nothing went wrong.
fn assert_imports_as_zeros(g: &Gpu, gl: &ExternalGl, memory: ExportableMemory, why: &str) {
    let imported = GlMemoryBuffer::import(gl, &memory).unwrap();
    assert_eq!(gl_words(imported.buffer().0), vec![0u32; WORDS], "{why}");
    drop(imported);
    drop(memory);
    g.check_no_errors();
}

/// New exportable memory is zeroed on a stream of its own: behind a kernel spinning past the wait
/// limit on a blocking stream, `ExportableMemory::new` succeeds without a timeout, and GL reads
/// zeros through an import of it once the kernel has ended. (Before, the zeroing ran on the legacy
/// default stream, after the kernel: it gave up after the wait limit with `Error::Timeout` and
/// leaked the allocation.)
#[test]
fn exportable_memory_is_zeroed_without_waiting_for_a_blocking_streams_kernel() {
    let Some((g, gl)) = gpu_and_gl() else { return };
    let busy = Busy::blocking(&g.ctx);
    busy.start(&g.kernels, spin_past_the_limit());
    let memory = busy.assert_not_held_up("ExportableMemory::new", || {
        ExportableMemory::new(&g.ctx, BYTES)
    });
    busy.wait();
    assert_imports_as_zeros(&g, &gl, memory, "the new memory is not zeroed");
}
