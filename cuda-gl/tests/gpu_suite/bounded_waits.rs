//! cuda-gl's own waits for the GPU give up after the wait limit (`cuda_gl::wait_limit`: 10 s by
//! default, 3 s under `ci/gpu/suite.sh`) with `Error::Timeout` while a kernel keeps the work they
//! wait for from finishing (a kernel spinning past the limit), and what that work may still use is
//! leaked, never freed (a drop records the timeout for `check_drop_errors`): a leaked mapping's
//! recovery, at the next map and in the registration's drop, and the wait for cuda-gl's private
//! stream (`Context::finish_queued`, which the display targets' colour maps and the video converter
//! also use in their drops), and a display target's drop after a forgotten frame. Before, each
//! waited with no limit (`cuCtxSynchronize`, `cuStreamSynchronize`): the whole spin here, for ever
//! behind a kernel that never ends. A pinned buffer's `as_slice_within` waits longer than the wait
//! limit when asked to, and new memory (`DeviceBuffer::zeroed`, a staged display target's canvas)
//! is zeroed without waiting for a kernel on a blocking stream, and a module whose kernel still
//! runs is not unloaded under it. (External memory's waits: `bounded_external_waits`.)
//!
//! Needs `--features egl` and a GPU; skips with the reason elsewhere.
#![cfg(feature = "egl")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::gpu::{
    Busy, Gpu, TEST_PTX, assert_drop_gives_up, assert_gave_up, assert_gave_up_in_drop,
    display_target, gpu, launch_spin, pattern_words, registered_buffer,
    second_registration_refused, spin_into, spin_on, spin_past_the_limit, unregister_and_delete,
};
use cuda_gl::display::{DisplayTarget, Format, Layout, Mode};
use cuda_gl::{DeviceBuffer, Event, Module, PinnedBuffer, RegisterFlags, RegisteredBuffer};
use std::time::{Duration, Instant};

/// A registered GL buffer whose mapping's guard was leaked, then a kernel spinning for
/// [`spin_past_the_limit`] elsewhere in the context: the buffer's name, its registration and the
/// kernel.
fn leaked_while_busy(g: &Gpu) -> (u32, RegisteredBuffer, Busy) {
    let busy = Busy::new(&g.ctx);
    let (name, mut res) = registered_buffer(&g.ctx, 4096, RegisterFlags::NONE);
    std::mem::forget(res.map(&g.stream).unwrap());
    busy.start(&g.kernels, spin_past_the_limit());
    (name, res, busy)
}

/// The map after a leaked guard's mapping recovers it: it waits for the context at most the wait
/// limit, gives up while the kernel runs (the buffer stays mapped), and recovers once it has ended.
#[test]
fn a_leaked_mappings_recovery_at_the_next_map_gives_up_after_ten_seconds() {
    let Some(g) = gpu() else { return };
    let (name, mut res, busy) = leaked_while_busy(&g);
    busy.assert_gives_up("the map after a leaked guard", || {
        res.map(&g.stream).map(drop)
    });
    assert!(res.is_mapped(), "the recovery unmapped under running work");
    busy.wait();
    res.map(&g.stream).unwrap().unmap().unwrap();
    unregister_and_delete(&g.ctx, res, name);
}

/// The drop of a registration whose guard was leaked gives up after the wait limit while the kernel
/// runs, and leaks the registration instead of unmapping and unregistering it under running work:
/// the GL buffer stays claimed (a new registration of it is refused).
#[test]
fn a_leaked_mappings_drop_gives_up_after_ten_seconds_and_leaks_the_registration() {
    let Some(g) = gpu() else { return };
    let (name, res, busy) = leaked_while_busy(&g);
    busy.assert_drop_gives_up("the drop after a leaked guard", res);
    busy.wait();
    // Leaked, not unregistered: the buffer is still claimed. (It goes with the GL context at
    // the end of the test.) The timeout is recorded for `check_drop_errors`.
    second_registration_refused(&g.ctx, name);
    assert_gave_up_in_drop(&g.ctx, &["cuEventQuery or cuCtxSynchronize"]);
}

/// `Context::finish_queued` waits for cuda-gl's private stream at most the wait limit: a memset
/// queued there after a kernel on the caller's stream waits for that kernel.
#[test]
fn finishing_the_private_stream_gives_up_after_ten_seconds() {
    let Some(g) = gpu() else { return };
    let spinning = DeviceBuffer::<u32>::zeroed(&g.ctx, 256).unwrap();
    let mut cleared = DeviceBuffer::<u32>::zeroed(&g.ctx, 1 << 20).unwrap();
    spin_on(&g.kernels, &spinning, &g.stream, spin_past_the_limit());
    cleared.memset_async(0xAB, &g.stream).unwrap();
    let start = Instant::now();
    let finished = g.ctx.finish_queued();
    assert_gave_up(
        finished,
        start.elapsed(),
        "finish_queued behind a spinning kernel",
    );
    g.stream.synchronize().unwrap();
    g.ctx.finish_queued().unwrap();
    assert!(cleared.to_vec().unwrap().iter().all(|&w| w == 0xABAB_ABAB));
    g.check_no_errors();
}

/// A display target in the stream mode whose frame was forgotten (`mem::forget`, safe) while its
/// kernel spins writing the frame's pixels: the drop waits for the whole context once, at most the
/// wait limit (its frame stream's slots), then leaks the slots' memory and the canvas (pixels and
/// array), the canvas's own wait giving up at once on the context an earlier wait gave up on, and
/// records both timeouts. The kernel then ends writing memory that is still allocated. (The stream
/// mode, not the staged one: the staged mode's pinned band buffers are freed with `cuMemFreeHost`,
/// which may wait for the whole device with no limit.)
#[test]
fn a_display_targets_drop_after_a_forgotten_frame_gives_up_after_ten_seconds() {
    let Some(g) = gpu() else { return };
    let (w, h) = (64, 64);
    let (mut target, _) = display_target(&g.ctx, (w, h), Some(Mode::Stream));
    let frame = target.frame(&g.stream).unwrap();
    let pixels = frame.pixels().unwrap();
    // SAFETY: the pixels hold w x h RGBA8 texels, one word each; the canvas that holds them is
    // freed only once the kernel has run, or leaked (what this test checks).
    let end = unsafe { spin_into(&g, pixels.ptr(), (w * h) as usize) };
    std::mem::forget(frame);
    let waits = ["cuCtxSynchronize", "cuCtxSynchronize"];
    assert_drop_gives_up(&g, target, &end, "the target's drop", &waits);
}

/// New memory is zeroed on a stream of its own, which waits for no kernel of the application's:
/// behind a kernel spinning past the wait limit on a blocking stream, `DeviceBuffer::zeroed` and a
/// staged display target (its canvas: pixels and array) are made without a timeout, and the buffer
/// reads as zeros. (Before, the zeroing ran on the legacy default stream, after the blocking
/// stream's kernel: each gave up after the wait limit with `Error::Timeout` and leaked its memory.)
#[test]
fn new_memory_is_zeroed_without_waiting_for_a_blocking_streams_kernel() {
    let Some(g) = gpu() else { return };
    let busy = Busy::blocking(&g.ctx);
    busy.start(&g.kernels, spin_past_the_limit());
    let zeroed = busy.assert_not_held_up("DeviceBuffer::zeroed", || {
        DeviceBuffer::<u32>::zeroed(&g.ctx, 1 << 20)
    });
    let layout = Layout::packed((64, 64), Format::Rgba8).unwrap();
    let (target, report) = busy.assert_not_held_up("a staged DisplayTarget::new", || {
        DisplayTarget::new(&g.ctx, layout, Some(Mode::Staged))
    });
    println!("{report}");
    busy.wait();
    assert!(
        zeroed.to_vec().unwrap().iter().all(|&w| w == 0),
        "the new buffer is not zeroed"
    );
    drop(target);
    g.check_no_errors();
}

/// A pinned buffer's copy queued behind a kernel spinning past the wait limit: `as_slice` gives up
/// after the wait limit, and `as_slice_within` with a longer limit then waits for the copy and
/// returns the kernel's words; once the copy has ended, a zero limit only asks.
#[test]
fn a_pinned_buffers_copy_behind_a_long_kernel_is_read_within_a_longer_limit() {
    let Some(g) = gpu() else { return };
    const WORDS: usize = 256;
    let source = DeviceBuffer::<u32>::zeroed(&g.ctx, WORDS).unwrap();
    let mut pinned = PinnedBuffer::<u32>::zeroed(&g.ctx, WORDS).unwrap();
    spin_on(&g.kernels, &source, &g.stream, spin_past_the_limit());
    pinned.copy_from_device_async(&source, &g.stream).unwrap();
    let start = Instant::now();
    let read = pinned.as_slice().map(<[u32]>::to_vec);
    assert_gave_up(read, start.elapsed(), "as_slice behind a spinning kernel");
    let start = Instant::now();
    let words = pinned
        .as_slice_within(Duration::from_secs(60))
        .unwrap()
        .to_vec();
    println!("as_slice_within then waited {:?}", start.elapsed());
    // `launch_spin`'s kernel writes the pattern of seed 1.
    assert_eq!(words, pattern_words(WORDS, 1));
    pinned.as_mut_slice_within(Duration::ZERO).unwrap()[0] = 7;
    assert_eq!(pinned.as_slice_within(Duration::ZERO).unwrap()[0], 7);
    g.check_no_errors();
}

/// The last handle of a module whose kernel still spins is dropped: the unload waits for the
/// context at most the wait limit, then leaks the module (and records the timeout) rather than
/// unload it under the kernel, which then ends and writes its words. (Before, the drop called
/// `cuModuleUnload` at once, which is not documented to wait for the module's kernels.)
#[test]
fn a_modules_drop_behind_its_running_kernel_gives_up_after_ten_seconds_and_leaks_it() {
    let Some(g) = gpu() else { return };
    // `out` outlives the kernel: the stream is synchronized by `assert_drop_gives_up` first.
    let (module, out) = module_spinning(&g, spin_past_the_limit());
    let end = Event::new(&g.ctx, false).unwrap();
    end.record(&g.stream).unwrap();
    let what = "the drop of a module whose kernel runs";
    assert_drop_gives_up(&g, module, &end, what, &["cuCtxSynchronize"]);
    assert_eq!(out.to_vec().unwrap(), pattern_words(256, 1));
}

/// A module whose kernels have all finished unloads at once when dropped, with nothing
/// recorded; so does one whose kernel was never launched.
#[test]
fn a_modules_drop_after_its_kernels_ended_unloads_it_at_once() {
    let Some(g) = gpu() else { return };
    // `out` outlives the kernel: the stream is synchronized here.
    let (module, out) = module_spinning(&g, Duration::ZERO);
    g.stream.synchronize().unwrap();
    let start = Instant::now();
    drop(module);
    drop(Module::from_ptx(&g.ctx, TEST_PTX).unwrap());
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(out.to_vec().unwrap(), pattern_words(256, 1));
    g.check_no_errors();
}

/// The test PTX's module, and 256 words its spin kernel, launched on `g.stream` for `spin`,
/// writes once done. The caller keeps the words until the stream has finished.
fn module_spinning(g: &Gpu, spin: Duration) -> (Module, DeviceBuffer<u32>) {
    let module = Module::from_ptx(&g.ctx, TEST_PTX).unwrap();
    let out = DeviceBuffer::<u32>::zeroed(&g.ctx, 256).unwrap();
    // SAFETY: `out` holds its words; the callers keep it until the stream has finished.
    unsafe { launch_spin(&module, out.device_ptr(), out.len(), &g.stream, spin) };
    (module, out)
}

/// A copy from a host slice waits for its DMA with no limit (the borrow needs it), here behind a
/// kernel spinning past the wait limit on its stream; meanwhile another thread's call that queues
/// through cuda-gl's private stream of the same context (a memset) returns at once. (Before, the
/// copy's wait ran under the private queue's lock: every such call, and the bounded waits and drops
/// behind it, waited for the spin too, for ever behind a kernel that never ends.)
#[test]
fn a_host_copy_behind_a_long_kernel_holds_up_no_other_threads_queued_call() {
    let Some(g) = gpu() else { return };
    const WORDS: usize = 1 << 16;
    let held_up = cuda_gl::Stream::new(&g.ctx, cuda_gl::StreamFlags::NonBlocking).unwrap();
    let spinning = DeviceBuffer::<u32>::zeroed(&g.ctx, 256).unwrap();
    let mut target = DeviceBuffer::<u32>::zeroed(&g.ctx, WORDS).unwrap();
    let mut other = DeviceBuffer::<u32>::zeroed(&g.ctx, WORDS).unwrap();
    let data = pattern_words(WORDS, 7);
    spin_on(&g.kernels, &spinning, &held_up, spin_past_the_limit());
    let end = Event::new(&g.ctx, false).unwrap();
    end.record(&held_up).unwrap();
    std::thread::scope(|s| {
        let copy = s.spawn(|| target.copy_from_slice_on(&data, &held_up));
        // Let the copy reach its wait.
        std::thread::sleep(Duration::from_millis(500));
        let start = Instant::now();
        other.memset_async(0xAB, &g.stream).unwrap();
        let took = start.elapsed();
        println!("memset_async while another thread's copy waits took {took:?}");
        assert!(
            took < Duration::from_secs(2),
            "memset_async waited {took:?} for another thread's copy"
        );
        assert!(
            !end.query().unwrap(),
            "the kernel ended before the memset was queued"
        );
        copy.join().unwrap().unwrap();
    });
    assert!(
        end.query().unwrap(),
        "the copy returned before the kernel it follows ended"
    );
    assert_eq!(target.to_vec_on(&held_up).unwrap(), data);
    assert!(
        other
            .to_vec_on(&g.stream)
            .unwrap()
            .iter()
            .all(|&w| w == 0xABAB_ABAB)
    );
    g.check_no_errors();
}
