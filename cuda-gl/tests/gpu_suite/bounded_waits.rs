//! cuda-gl's own waits for the GPU give up after 10 s with `Error::Timeout` while a kernel
//! keeps the work they wait for from finishing (a kernel of one block spinning for 13 s), and
//! what that work may still use is leaked, never freed: a leaked mapping's recovery, at the next
//! map and in the registration's drop, and the wait for cuda-gl's private stream
//! (`Context::finish_queued`, which the display targets' colour maps and the video converter
//! also use in their drops). Before, each waited with no limit (`cuCtxSynchronize`,
//! `cuStreamSynchronize`): 13 s here, for ever behind a kernel that never ends.
//!
//! Needs `--features egl` and a GPU; skips with the reason elsewhere.
#![cfg(feature = "egl")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::gpu::{
    Busy, Gpu, assert_took_the_limit, gpu, registered_buffer, second_registration_refused, spin_on,
    unregister_and_delete,
};
use cuda_gl::{DeviceBuffer, Error, RegisterFlags, RegisteredBuffer};
use std::time::{Duration, Instant};

/// How long the kernel spins: past the 10 s limit, so that each wait gives up while it runs.
const SPIN: Duration = Duration::from_secs(13);

/// Asserts that `result`, which took `took`, is the limit's `Error::Timeout`.
fn assert_gave_up<T>(result: cuda_gl::Result<T>, took: Duration, what: &str) {
    match result {
        Ok(_) => panic!("{what} did not give up: it waited {took:?}"),
        Err(e) => {
            println!("{what}: {e}");
            assert!(matches!(e, Error::Timeout { .. }), "{what}: {e:?}");
        }
    }
    assert_took_the_limit(took, what);
}

/// A registered GL buffer whose mapping's guard was leaked, then a kernel spinning for
/// [`SPIN`] elsewhere in the context: the buffer's name, its registration and the kernel.
fn leaked_while_busy(g: &Gpu) -> (u32, RegisteredBuffer, Busy) {
    let busy = Busy::new(&g.ctx);
    let (name, mut res) = registered_buffer(&g.ctx, 4096, RegisterFlags::NONE);
    std::mem::forget(res.map(&g.stream).unwrap());
    busy.start(&g.kernels, SPIN);
    (name, res, busy)
}

/// The map after a leaked guard's mapping recovers it: it waits for the context at most 10 s,
/// gives up while the kernel runs (the buffer stays mapped), and recovers once it has ended.
#[test]
fn a_leaked_mappings_recovery_at_the_next_map_gives_up_after_ten_seconds() {
    let Some(g) = gpu() else { return };
    let (name, mut res, busy) = leaked_while_busy(&g);
    let start = Instant::now();
    let mapped = res.map(&g.stream).map(drop);
    assert_gave_up(mapped, start.elapsed(), "the map after a leaked guard");
    assert!(
        busy.running(),
        "the kernel ended before the recovery gave up"
    );
    assert!(res.is_mapped(), "the recovery unmapped under running work");
    busy.wait();
    res.map(&g.stream).unwrap().unmap().unwrap();
    unregister_and_delete(&g.ctx, res, name);
}

/// The drop of a registration whose guard was leaked gives up after 10 s while the kernel runs,
/// and leaks the registration instead of unmapping and unregistering it under running work:
/// the GL buffer stays claimed (a new registration of it is refused).
#[test]
fn a_leaked_mappings_drop_gives_up_after_ten_seconds_and_leaks_the_registration() {
    let Some(g) = gpu() else { return };
    let (name, res, busy) = leaked_while_busy(&g);
    let start = Instant::now();
    drop(res);
    assert_took_the_limit(start.elapsed(), "the drop after a leaked guard");
    assert!(busy.running(), "the kernel ended before the drop gave up");
    busy.wait();
    // Leaked, not unregistered: the buffer is still claimed. (It goes with the GL context at
    // the end of the test; the timeout is logged, not recorded: it has no driver error.)
    second_registration_refused(&g.ctx, name);
    g.ctx.check_drop_errors().unwrap();
}

/// `Context::finish_queued` waits for cuda-gl's private stream at most 10 s: a memset queued
/// there after a kernel on the caller's stream waits for that kernel.
#[test]
fn finishing_the_private_stream_gives_up_after_ten_seconds() {
    let Some(g) = gpu() else { return };
    let spinning = DeviceBuffer::<u32>::zeroed(&g.ctx, 256).unwrap();
    let mut cleared = DeviceBuffer::<u32>::zeroed(&g.ctx, 1 << 20).unwrap();
    spin_on(&g.kernels, &spinning, &g.stream, SPIN);
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
