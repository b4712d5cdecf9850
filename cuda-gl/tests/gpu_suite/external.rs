//! The external-memory ring on a real GPU: CUDA writes frames into memory from `cuMemCreate`,
//! GL imports it with `GL_EXT_memory_object_fd` and copies every frame into a buffer of its own,
//! and the copies must equal the CPU reference byte for byte; the same ring without the event
//! wait, against a slow producer, must fail that check. Leaked guards and calls with another GL
//! context current are caught at run time. Needs `--features egl` and a GPU; skips with a reason
//! elsewhere (fails under `CUDA_GL_REQUIRE_GPU=1`).
#![cfg(all(feature = "egl", unix))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::gpu::external::{fill_words_slow, frame_seed, gl_copy, gpu_and_gl};
use crate::gpu::*;
use cuda_gl::egl::HeadlessContext;
use cuda_gl::external::{CudaWrite, ExportableMemory, ExternalGl, ExternalRing, GlMemoryBuffer};
use cuda_gl::{Error, Function, UsageError};
use std::time::Instant;

/// Words per frame: 256 x 256 RGBA8 pixels' worth, launched in one wave of 256 blocks.
const WORDS: usize = 256 * 256;
const BYTES: usize = WORDS * 4;
/// Frames are checked in batches of this many (the archive buffer holds one batch).
const BATCH: usize = 250;
/// How long each frame of the slow producer spins before writing: 5 ms.
const SLOW_NS: u64 = 5_000_000;

/// Queues `fill` (`ext_fill_u32_slow`) on the test's stream: it spins `spin_ns`, then writes the
/// pattern seeded with `seed` into the whole slot of `write`.
fn fill_slot(g: &Gpu, fill: &Function, write: &CudaWrite<'_>, seed: u32, spin_ns: u64) {
    assert_eq!(write.len(), BYTES);
    // SAFETY: (1) the slot holds WORDS u32 words; the callers give `write` the test's stream, on
    // which its event is recorded, and the ring keeps the memory allocated until its drop
    // synchronizes the CUDA context.
    unsafe { fill_words_slow(g, fill, write.device_ptr(), WORDS, seed, spin_ns) }.unwrap();
}

/// Whether GL waits for CUDA's writes before reading a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    /// `ExternalRing::read`: waits for the slot's event.
    Ordered,
    /// `ExternalRing::read_unordered`: the event wait removed.
    WithoutEventWait,
}

/// What one run of the ring found.
#[derive(Debug)]
struct RingRun {
    /// Frames whose copy differs from the reference.
    bad: Vec<usize>,
    /// Microseconds per frame, wall clock, including the batch checks.
    us_per_frame: f64,
}

/// Runs `frames` frames through a ring of `slots` slots. At step `n`, CUDA writes frame `n`
/// (pattern seeded with `frame_seed(n)`, after spinning `spin_ns`) into slot `n % slots`, and
/// GL copies frame `n - lag` from its slot into an archive buffer (`glCopyBufferSubData`, in
/// GL's own queue). After each batch, the archive is read back and compared to the CPU
/// reference.
fn run_ring(
    g: &Gpu,
    gl: &ExternalGl,
    slots: usize,
    lag: usize,
    frames: usize,
    spin_ns: u64,
    order: Order,
) -> RingRun {
    assert!(lag < slots, "a lag of {lag} needs more than {slots} slots");
    let mut ring = ExternalRing::new(&g.ctx, gl, slots, BYTES).unwrap();
    assert_eq!(ring.len(), slots);
    assert_eq!(ring.slot_bytes(), BYTES);
    let fill = g.kernels.function("ext_fill_u32_slow").unwrap();
    let batch = frames.min(BATCH);
    let archive = gl_buffer(batch * BYTES, None);
    let mut bad = Vec::new();
    let start = Instant::now();
    for n in 0..frames + lag {
        if n < frames {
            let write = ring.write(n % slots, &g.stream).unwrap();
            fill_slot(g, &fill, &write, frame_seed(n), spin_ns);
            write.finish().unwrap();
        }
        if n < lag {
            continue;
        }
        let m = n - lag;
        let read = match order {
            Order::Ordered => ring.read(m % slots).unwrap(),
            // SAFETY: the test wants GL to read unfinished frames; the memory stays allocated.
            Order::WithoutEventWait => unsafe { ring.read_unordered(m % slots) }.unwrap(),
        };
        // The archive holds `batch` frames of BYTES bytes.
        gl_copy(read.buffer().0, archive, (m % batch) * BYTES, BYTES);
        read.finish().unwrap();
        let end_of_batch = m % batch == batch - 1 || m == frames - 1;
        if end_of_batch {
            ring.wait_idle().unwrap();
            let first = m - m % batch;
            let count = m - first + 1;
            let words = read_gl_buffer(archive, count * WORDS);
            for (j, frame) in words.chunks_exact(WORDS).enumerate() {
                if frame != pattern_words(WORDS, frame_seed(first + j)).as_slice() {
                    bad.push(first + j);
                }
            }
        }
    }
    let us_per_frame = start.elapsed().as_secs_f64() * 1e6 / frames as f64;
    g.stream.synchronize().unwrap();
    drop(ring);
    delete_buffer(archive);
    g.check_no_errors();
    RingRun { bad, us_per_frame }
}

#[test]
fn ring_frames_read_by_gl_equal_the_cpu_reference_over_1000_frames() {
    let Some((g, gl)) = gpu_and_gl() else { return };
    eprintln!(
        "GL {} reports {} device UUID(s)",
        gl.renderer(),
        gl.device_uuids().len()
    );
    for (slots, lag) in [(2, 1), (3, 2), (2, 0), (3, 1)] {
        let run = run_ring(&g, &gl, slots, lag, 1000, 0, Order::Ordered);
        eprintln!(
            "{slots} slots, GL {lag} frame(s) behind: {} of 1000 frames wrong, {:.1} us/frame",
            run.bad.len(),
            run.us_per_frame
        );
        assert!(
            run.bad.is_empty(),
            "{slots} slots, lag {lag}: frames {:?} differ from the reference",
            &run.bad[..run.bad.len().min(20)]
        );
    }
}

#[test]
fn slow_producer_is_ordered_by_the_event_wait() {
    let Some((g, gl)) = gpu_and_gl() else { return };
    let run = run_ring(&g, &gl, 2, 0, 40, SLOW_NS, Order::Ordered);
    eprintln!(
        "ordered, 5 ms producer: {} of 40 frames wrong, {:.0} us/frame",
        run.bad.len(),
        run.us_per_frame
    );
    assert!(run.bad.is_empty(), "frames {:?} differ", run.bad);
}

#[test]
fn without_the_event_wait_gl_reads_unfinished_frames() {
    let Some((g, gl)) = gpu_and_gl() else { return };
    // 5 ms first; 50 ms in case GL only gets the GPU when CUDA's time slice ends.
    let mut shown = false;
    for spin_ns in [SLOW_NS, 10 * SLOW_NS] {
        let run = run_ring(&g, &gl, 2, 0, 40, spin_ns, Order::WithoutEventWait);
        eprintln!(
            "event wait removed, {} ms producer: {} of 40 frames wrong (first: {:?}), {:.0} \
             us/frame",
            spin_ns / 1_000_000,
            run.bad.len(),
            run.bad.first(),
            run.us_per_frame
        );
        if !run.bad.is_empty() {
            shown = true;
            break;
        }
    }
    assert!(
        shown,
        "with the event wait removed, every frame GL copied still matched: the race did not \
         show, so this check could not catch it"
    );
    // For the record, not asserted: the same broken ordering with a fast producer.
    let fast = run_ring(&g, &gl, 2, 0, 200, 0, Order::WithoutEventWait);
    eprintln!(
        "event wait removed, fast producer: {} of 200 frames wrong",
        fast.bad.len()
    );
}

#[test]
fn ring_rejects_bad_arguments() {
    let Some((g, gl)) = gpu_and_gl() else { return };
    for slots in [0, 17] {
        let err = ExternalRing::new(&g.ctx, &gl, slots, BYTES).unwrap_err();
        assert!(
            matches!(err, Error::Usage(UsageError::BadRingSlots { slots: s, max: 16 }) if s == slots),
            "{slots}: {err}"
        );
    }
    let err = ExternalRing::new(&g.ctx, &gl, 2, 0).unwrap_err();
    assert!(
        matches!(err, Error::Usage(UsageError::ZeroSize { .. })),
        "{err}"
    );
    let mut ring = ExternalRing::new(&g.ctx, &gl, 2, BYTES).unwrap();
    let out_of_range = |r: cuda_gl::Result<()>| {
        matches!(
            r,
            Err(Error::Usage(UsageError::OutOfRange {
                what: "ring slot",
                index: 2,
                len: 2
            }))
        )
    };
    assert!(out_of_range(ring.gl_buffer(2).map(drop)));
    assert!(out_of_range(ring.read(2).map(drop)));
    assert!(out_of_range(ring.write(2, &g.stream).map(drop)));
    let memory = ExportableMemory::new(&g.ctx, 1).unwrap();
    assert_eq!(memory.requested_size(), 1);
    assert!(memory.size() >= 1 && memory.size().is_power_of_two());
    eprintln!("allocation granularity: {} bytes", memory.size());
    drop(ring);
    g.ctx.check_drop_errors().unwrap();
}

/// Run on its own (`--exact`): if the driver freed the memory under GL, the GL context could be
/// lost for the tests after it.
#[test]
fn gl_buffer_outlives_released_cuda_memory() {
    let Some((g, gl)) = gpu_and_gl() else { return };
    let memory = ExportableMemory::new(&g.ctx, BYTES).unwrap();
    let fill = g.kernels.function("fill_u32").unwrap();
    let ptr = memory.device_ptr().unwrap();
    // SAFETY: the allocation holds WORDS words; the stream is synchronized before it is freed.
    unsafe { launch_words(&fill, &g.stream, ptr, WORDS, 0xE47u32) }.unwrap();
    g.stream.synchronize().unwrap();
    let imported = GlMemoryBuffer::import(&gl, &memory).unwrap();
    assert_eq!(imported.size(), BYTES);
    assert_eq!(
        read_gl_buffer(imported.buffer().0, WORDS),
        pattern_words(WORDS, 0xE47)
    );
    // Unmap and release the CUDA side: the GL import still references the physical memory.
    drop(memory);
    g.ctx.check_drop_errors().unwrap();
    let after = read_gl_buffer(imported.buffer().0, WORDS);
    assert_eq!(after, pattern_words(WORDS, 0xE47), "GL lost the bytes");
    drop(imported);
    check_gl();
}

/// The frames among `frames` consecutive ones in `archive` (frame `j` seeded with
/// `frame_seed(j)`) that differ from the reference.
fn wrong_frames(archive: u32, frames: usize) -> Vec<usize> {
    let words = read_gl_buffer(archive, frames * WORDS);
    words
        .chunks_exact(WORDS)
        .enumerate()
        .filter(|(j, frame)| *frame != pattern_words(WORDS, frame_seed(*j)).as_slice())
        .map(|(j, _)| j)
        .collect()
}

/// A `CudaWrite` leaked with `mem::forget` never records the slot's event. A ring that went by
/// the event alone would find no write pending and let GL copy the slot while the slow kernel
/// still spins (as `read_unordered` does), so the copies would hold the slot's older bytes; the
/// ring finds the slot still marked as being written and synchronizes the CUDA context first.
#[test]
fn a_leaked_write_guard_is_waited_for_before_gl_reads() {
    let Some((g, gl)) = gpu_and_gl() else { return };
    const FRAMES: usize = 4;
    let mut ring = ExternalRing::new(&g.ctx, &gl, 2, BYTES).unwrap();
    let fill = g.kernels.function("ext_fill_u32_slow").unwrap();
    let archive = gl_buffer(FRAMES * BYTES, None);
    for n in 0..FRAMES {
        let slot = n % ring.len();
        let write = ring.write(slot, &g.stream).unwrap();
        fill_slot(&g, &fill, &write, frame_seed(n), 10 * SLOW_NS);
        std::mem::forget(write);
        let read = ring.read(slot).unwrap();
        gl_copy(read.buffer().0, archive, n * BYTES, BYTES);
        read.finish().unwrap();
    }
    ring.wait_idle().unwrap();
    let bad = wrong_frames(archive, FRAMES);
    assert!(
        bad.is_empty(),
        "GL copied frames {bad:?} before the leaked writes' kernel had written them"
    );
    drop(ring);
    delete_buffer(archive);
    g.check_no_errors();
}

/// A `GlRead` leaked with `mem::forget` never places its fence (nor flushes GL's commands). A
/// ring that went by the fence alone would let the next `write` of the slot overwrite it before
/// GL's copy of the old frame has run (the copy waits in GL's queue behind other work), so the
/// copy would hold CUDA's next frame; the ring finds the slot still marked as being read, fences
/// GL's commands issued so far and waits for them first.
#[test]
fn a_leaked_read_guard_is_waited_for_before_cuda_writes() {
    let Some((g, gl)) = gpu_and_gl() else { return };
    const SCRATCH: usize = 64 << 20;
    let mut ring = ExternalRing::new(&g.ctx, &gl, 2, BYTES).unwrap();
    let fill = g.kernels.function("ext_fill_u32_slow").unwrap();
    let write_frame = |ring: &mut ExternalRing, seed: u32| {
        let write = ring.write(0, &g.stream).unwrap();
        fill_slot(&g, &fill, &write, seed, 0);
        write.finish().unwrap();
    };
    let (old, new) = (frame_seed(0), frame_seed(1));
    write_frame(&mut ring, old);
    let busy = [gl_buffer(SCRATCH, None), gl_buffer(SCRATCH, None)];
    let archive = gl_buffer(BYTES, None);
    let read = ring.read(0).unwrap();
    // About a millisecond of GL work ahead of the copy of the slot.
    for _ in 0..32 {
        gl_copy(busy[0], busy[1], 0, SCRATCH);
    }
    gl_copy(read.buffer().0, archive, 0, BYTES);
    std::mem::forget(read);
    write_frame(&mut ring, new);
    g.stream.synchronize().unwrap();
    assert!(
        read_gl_buffer(archive, WORDS) == pattern_words(WORDS, old),
        "GL's copy of the slot, issued before the leaked read guard, did not read the frame \
         written before it: CUDA's next write overtook it"
    );
    let read = ring.read(0).unwrap();
    assert_eq!(
        read_gl_buffer(read.buffer().0, WORDS),
        pattern_words(WORDS, new),
        "the slot does not hold CUDA's next frame"
    );
    read.finish().unwrap();
    drop(ring);
    delete_buffer(archive);
    busy.into_iter().for_each(delete_buffer);
    g.check_no_errors();
}

/// The ring's GL calls go to the context current on the thread. Unchecked, with another context
/// current, the waits would use sync objects in the wrong context and the drop would delete that
/// context's buffers of the same names. Each call returns `WrongGlContext` (or `NoGlContext` with
/// none current), and the drop leaks the GL objects instead.
#[test]
fn ring_calls_with_another_gl_context_current_are_refused() {
    let Some((g, gl)) = gpu_and_gl() else { return };
    let mut ring = ExternalRing::new(&g.ctx, &gl, 2, BYTES).unwrap();
    let doomed = ExternalRing::new(&g.ctx, &gl, 2, BYTES).unwrap();
    let names: Vec<u32> = (0..doomed.len())
        .map(|i| doomed.gl_buffer(i).unwrap().0)
        .collect();
    let memory = ExportableMemory::new(&g.ctx, BYTES).unwrap();
    // Current from here on; a fresh context hands out buffer names from 1 up, as the test's did.
    let other = HeadlessContext::for_cuda_device(&g.device).unwrap();
    let mut others = Vec::new();
    while !names.iter().all(|n| others.contains(n)) && others.len() < 64 {
        others.push(gl_buffer(16, None));
    }
    assert!(
        names.iter().all(|n| others.contains(n)),
        "the other context gave none of the names {names:?} in {} buffers",
        others.len()
    );
    let refused = |what: &str, result: cuda_gl::Result<()>| match result {
        Err(Error::WrongGlContext { owner, current, .. }) => {
            assert_ne!(owner, current, "{what}");
        }
        other => panic!("{what} with another GL context current: {other:?}"),
    };
    refused("write", ring.write(0, &g.stream).map(drop));
    refused("read", ring.read(0).map(drop));
    refused("wait_idle", ring.wait_idle());
    refused("import", GlMemoryBuffer::import(&gl, &memory).map(drop));
    refused("new", ExternalRing::new(&g.ctx, &gl, 1, BYTES).map(drop));
    drop(doomed);
    for &name in &names {
        // SAFETY: a context is current.
        let alive = unsafe { gl::IsBuffer(name) };
        assert_eq!(
            alive,
            gl::TRUE,
            "dropping the ring with another context current deleted that context's buffer {name}"
        );
    }
    others.into_iter().for_each(delete_buffer);
    check_gl();
    other.release_current().unwrap();
    let err = ring.read(0).map(drop).unwrap_err();
    assert!(matches!(err, Error::NoGlContext { .. }), "{err:?}");
    g.gl.make_current().unwrap();
    drop(other);
    // With the owner current again the ring works.
    ring.write(0, &g.stream).unwrap().finish().unwrap();
    ring.read(0).unwrap().finish().unwrap();
    ring.wait_idle().unwrap();
    drop(ring);
    drop(memory);
    g.check_no_errors();
}
