//! GPU tests of where cudarc's events of a copy are recorded: on cuda-gl's private stream right
//! after the copy, in the copy's own run, so that they follow the copy and nothing else. Work
//! that reaches the private stream once that run has released the lock (another thread's run,
//! which may wait behind a kernel that never ends) must not hold them up: cudarc's later uses
//! and frees of the memory, on any stream, wait for them. Before, the event was recorded in a
//! second locked call after the run, behind whatever other threads had queued in between.
//!
//! The work queued in between is a wait for a kernel that spins on another stream, queued on the
//! private stream by a hook of the copy's run (`crate::queue::tests::after_next_work`), right
//! after its work: where another thread's run would queue its own as soon as the lock is free.
//! Crate-internal: only crate code can queue there. Need the `egl` and `cudarc` features and a
//! GPU; skip with the reason elsewhere, and fail with `CUDA_GL_REQUIRE_GPU=1`. Each phase spins
//! for 4 s.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::egl::test_gl::on_gpu;
use crate::graphics::unordered_tests::{Spinner, delete_gl_texture, gl_texture};
use crate::queue::tests::{after_next_work, after_next_work_of};
use crate::{Context, ImageTarget, RegisterFlags, RegisteredImage};
use cudarc::driver::{CudaContext, CudaEvent, CudaStream, DevicePtr, DevicePtrMut};
use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long the kernel behind the private stream's extra work spins.
const SPIN: Duration = Duration::from_secs(4);

/// Has the next run on this thread (of `call` when given: see `after_next_work_of`) queue,
/// right after its work, a wait on the private stream for a kernel launched now on `t`,
/// spinning for [`SPIN`]. Returns when the kernel began, an event of `t` after it, and whether
/// the hook ran.
pub(crate) fn hold_private_after_next_work(
    spinner: &Spinner,
    t: &Arc<CudaStream>,
    call: Option<&'static str>,
) -> (Instant, CudaEvent, Rc<Cell<bool>>) {
    let start = Instant::now();
    spinner.spin_for(t, SPIN);
    let spinning = t.record_event(None).unwrap();
    let spun = t.record_event(None).unwrap();
    let ran = Rc::new(Cell::new(false));
    let hooked = ran.clone();
    let hook = move |private: cuda_gl_sys::CUstream| {
        // SAFETY: the private stream of the run's context, bound by the run, and a live event
        // of that context (the cudarc context the `Context` was made from), recorded plainly.
        unsafe { crate::result::stream::wait_event(private, spinning.cu_event().cast()) }
            .expect("queue the private stream's wait for the spinning kernel");
        hooked.set(true);
    };
    match call {
        Some(call) => after_next_work_of(call, hook),
        None => after_next_work(hook),
    }
    (start, spun, ran)
}

/// `probe` (an event of a stream that waits for cudarc's event of the copy's memory, `what`)
/// completes while the kernel that the private stream's later work waits for still spins
/// (`spun`, its event, not complete): cudarc's event does not follow that work.
pub(crate) fn assert_not_held_up(what: &str, probe: &CudaEvent, spun: &CudaEvent, start: Instant) {
    while !probe.is_complete() && start.elapsed() < SPIN / 2 {
        std::thread::sleep(Duration::from_millis(5));
    }
    let (done, at) = (probe.is_complete(), start.elapsed());
    assert!(
        !spun.is_complete(),
        "the test was too slow to check anything: the kernel that spins for {SPIN:?} had ended \
         {at:?} after it began"
    );
    assert!(
        done,
        "{what} was not complete {at:?} after the copy was queued: it waits for work queued on \
         cuda-gl's private stream after the copy's run (a kernel that spins for {SPIN:?})"
    );
}

/// A cudarc context on device 0 shared by a cuda-gl `Context`, a [`Spinner`] in it, and three
/// of its streams: the caller's, the spinner's and the probe's. (Three streams also put cudarc
/// in its multi-stream mode, where it records its events.)
pub(crate) fn rig() -> (Arc<Context>, Spinner, [Arc<CudaStream>; 3]) {
    let cu = CudaContext::new(0).expect("cudarc context on device 0");
    let streams = [(); 3].map(|()| cu.new_stream().expect("a cudarc stream"));
    let ctx = Context::from_cudarc(&cu).expect("Context::from_cudarc");
    let spinner = Spinner::new(&ctx);
    (ctx, spinner, streams)
}

#[test]
fn cudarc_events_of_a_copy_follow_the_copy_not_later_work_on_the_private_stream() {
    let test = "cudarc_events_of_a_copy_follow_the_copy_not_later_work_on_the_private_stream";
    let Some(_gl) = on_gpu(test) else { return };
    let (ctx, spinner, [s, t, u]) = rig();
    let (w, h) = (64, 16);
    let words: Vec<u32> = (0..(w * h) as u32).map(|i| 0xC0DE_0000 | i).collect();
    let upload: Vec<u32> = (0..(w * h) as u32).map(|i| 0xF00D_0000 | i).collect();
    let texture = gl_texture(w, h, &words);
    let mut image =
        RegisteredImage::register(&ctx, texture, ImageTarget::Texture2D, RegisterFlags::NONE)
            .unwrap();
    let mut dst = s.alloc_zeros::<u32>(w * h).unwrap();
    let mut src = s.clone_htod(&upload).unwrap();
    s.synchronize().unwrap();
    let mapped = image.map(&s).unwrap();
    let array = mapped.array(0, 0).unwrap();

    // copy_to_cudarc: cudarc's write event of `dst`, which a read of `dst` on `u` waits for.
    let (start, spun, ran) = hold_private_after_next_work(&spinner, &t, None);
    array.copy_to_cudarc(&mut dst, &s).unwrap();
    assert!(ran.get(), "the copy's run did not run the test's hook");
    drop(dst.device_ptr(&u));
    let probe = u.record_event(None).unwrap();
    assert_not_held_up("copy_to_cudarc's write event", &probe, &spun, start);
    s.synchronize().unwrap();
    assert_eq!(s.clone_dtoh(&dst).unwrap(), words, "copy_to_cudarc's copy");

    // copy_from_cudarc: cudarc's read event of `src`, which a write of `src` on `u` waits for.
    let (start, spun, ran) = hold_private_after_next_work(&spinner, &t, None);
    array.copy_from_cudarc(&src, &s).unwrap();
    assert!(ran.get(), "the copy's run did not run the test's hook");
    drop(src.device_ptr_mut(&u));
    let probe = u.record_event(None).unwrap();
    assert_not_held_up("copy_from_cudarc's read event", &probe, &spun, start);
    s.synchronize().unwrap();
    let mut got = vec![0u32; w * h];
    array.copy_to_host(&mut got).unwrap();
    assert_eq!(got, upload, "copy_from_cudarc's copy");

    t.synchronize().unwrap();
    ctx.finish_queued().unwrap();
    mapped.unmap().unwrap();
    image.unregister().unwrap();
    drop((src, dst));
    drop(spinner);
    ctx.check_drop_errors().unwrap();
    delete_gl_texture(texture);
}
