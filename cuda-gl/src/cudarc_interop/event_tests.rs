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

use crate::egl::HeadlessContext;
use crate::egl::test_gl::on_gpu;
use crate::graphics::unordered_tests::{Spinner, delete_gl_texture, gl_texture};
use crate::mode_choice::Mode;
use crate::queue::tests::{after_next_work, after_next_work_of};
use crate::result::test_ops::{Op, recording_ops};
use crate::{Context, ImageTarget, RegisterFlags, RegisteredImage};
use cudarc::driver::{
    CudaContext, CudaEvent, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, SyncOnDrop,
};
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
    let (done, at) = probe_while_spinning(probe, spun, start);
    assert!(
        done,
        "{what} was not complete {at:?} after the copy was queued: it waits for work queued on \
         cuda-gl's private stream after the copy's run (a kernel that spins for {SPIN:?})"
    );
}

/// Has `read` (a call that reads `src` on `s`; `what` names its read event) run while the
/// private stream, right after the run named `run` (see `after_next_work_of`), waits for a
/// kernel spinning on `t`; then a stream that waits for cudarc's read event of `src` (a write of
/// it on `u`) must finish while that kernel spins ([`assert_not_held_up`]). Waits for `t`, then
/// `s`, before it returns.
pub(crate) fn assert_read_not_held_up<T: DeviceRepr>(
    src: &mut CudaSlice<T>,
    run: &'static str,
    spinner: &Spinner,
    (s, t, u): (&Arc<CudaStream>, &Arc<CudaStream>, &Arc<CudaStream>),
    what: &str,
    read: impl FnOnce(&CudaSlice<T>),
) {
    let (start, spun, ran) = hold_private_after_next_work(spinner, t, Some(run));
    read(src);
    assert!(
        ran.get(),
        "{what}: the read's run ({run}) did not run the test's hook"
    );
    drop(src.device_ptr_mut(u));
    let probe = u.record_event(None).unwrap();
    assert_not_held_up(what, &probe, &spun, start);
    t.synchronize().unwrap();
    s.synchronize().unwrap();
}

/// Waits up to half the spin (begun at `start`) for `probe`; whether it completed, and when.
/// Fails when the kernel (`spun`, its event) had ended by then: the test checked nothing.
fn probe_while_spinning(probe: &CudaEvent, spun: &CudaEvent, start: Instant) -> (bool, Duration) {
    while !probe.is_complete() && start.elapsed() < SPIN / 2 {
        std::thread::sleep(Duration::from_millis(5));
    }
    let (done, at) = (probe.is_complete(), start.elapsed());
    assert!(
        !spun.is_complete(),
        "the test was too slow to check anything: the kernel that spins for {SPIN:?} had ended \
         {at:?} after it began"
    );
    (done, at)
}

/// Has cudarc write `src` on `t` behind a kernel spinning there for [`SPIN`] (cudarc's write
/// event of `src` then follows the kernel), and returns when the kernel began and an event of
/// `t` after it: a stream that cudarc asks to wait for its writes of `src` waits for the spin.
fn written_behind_a_spin<T>(
    spinner: &Spinner,
    src: &mut CudaSlice<T>,
    t: &Arc<CudaStream>,
) -> (Instant, CudaEvent) {
    let start = Instant::now();
    spinner.spin_for(t, SPIN);
    drop(src.device_ptr_mut(t));
    (start, t.record_event(None).unwrap())
}

/// `s` holds no wait for the kernel spinning since `start` (`spun`, an event after it, of
/// [`written_behind_a_spin`]): an event recorded on `s` now completes while it spins. `what`
/// names the calls refused before that left `s` alone.
fn assert_no_wait_left(what: &str, s: &CudaStream, spun: &CudaEvent, start: Instant) {
    let probe = s.record_event(None).unwrap();
    let (done, _) = probe_while_spinning(&probe, spun, start);
    assert!(
        done,
        "{what} left a wait for cudarc's write of the memory (behind a kernel that spins for \
         {SPIN:?}) queued on the caller's stream: cudarc was asked for the address before the \
         frame was refused"
    );
}

/// Has `refuse` (calls that must refuse a frame for its size, each refusal checked by `refuse`;
/// `what` names them) run with a slice of `bytes` zero bytes of `s` that cudarc last wrote on
/// `t`, behind a kernel spinning there ([`written_behind_a_spin`]). They must leave `s` no wait
/// for that write ([`assert_no_wait_left`]): a size refused before cudarc is asked for the
/// slice's address. Waits for `t`, then `s`, and returns the slice.
pub(crate) fn assert_refused_before_cudarc_waits(
    spinner: &Spinner,
    (s, t): (&Arc<CudaStream>, &Arc<CudaStream>),
    bytes: usize,
    what: &str,
    refuse: impl FnOnce(&CudaSlice<u8>),
) -> CudaSlice<u8> {
    let mut short = s.alloc_zeros::<u8>(bytes).unwrap();
    s.synchronize().unwrap();
    let (start, spun) = written_behind_a_spin(spinner, &mut short, t);
    refuse(&short);
    assert_no_wait_left(what, s, &spun, start);
    t.synchronize().unwrap();
    s.synchronize().unwrap();
    short
}

/// The address of `src` and the handle of cudarc's read event of it, asked through a read of it
/// on `s` (whose guard records that event on `s` when dropped, here: harmless).
pub(crate) fn read_event_of<T>(
    src: &CudaSlice<T>,
    s: &Arc<CudaStream>,
) -> (u64, cuda_gl_sys::CUevent) {
    let (ptr, guard) = src.device_ptr(s);
    match &guard {
        SyncOnDrop::Record(Some((event, _))) => (ptr, event.cu_event().cast()),
        _ => panic!("cudarc does not track the slice's reads (one stream only?)"),
    }
}

/// In `ops` (what a call queued, in order: `result::test_ops::recording_ops`), cudarc's read event
/// `event` of the `bytes` bytes at `src` is recorded after the last op that reads them (a copy
/// out of them, or a kernel when `kernel_reads`: the video conversion's), on the stream that
/// op ran on, which is not `caller` (the reads run on cuda-gl's private stream). `what` names
/// the call in the failures.
pub(crate) fn assert_recorded_after_reads(
    what: &str,
    ops: &[Op],
    (src, bytes): (u64, usize),
    kernel_reads: bool,
    event: cuda_gl_sys::CUevent,
    caller: &CudaStream,
) {
    let reads = |op: &Op| match *op {
        Op::Copy { src: from, .. } => (src..src + bytes as u64).contains(&from),
        Op::Kernel { .. } => kernel_reads,
        Op::CudarcRecord { .. } => false,
    };
    let last = ops
        .iter()
        .rposition(reads)
        .unwrap_or_else(|| panic!("{what}: no read of the source in {ops:?}"));
    let stream = ops[last].stream();
    assert_ne!(
        stream,
        caller.cu_stream().cast(),
        "{what}: the source read on the caller's stream, not cuda-gl's private one: {ops:?}"
    );
    let recorded = ops[last..].iter().any(
        |op| matches!(*op, Op::CudarcRecord { stream: on, event: e } if on == stream && e == event),
    );
    assert!(
        recorded,
        "{what}: cudarc's read event not recorded on the reads' stream after the last read \
         (op {last}): {ops:?}"
    );
}

/// In each mode (interop, staged, stream), what `read` queues when it reads `src` on `s`
/// (`call`, named in the failures), recorded in order by `recording_ops`, so that no GPU timing
/// decides the outcome: the reads (copies, and kernels too where `kernel_reads`) on cuda-gl's
/// private stream, then cudarc's read event of `src` on that stream
/// ([`assert_recorded_after_reads`]). `make` makes what reads in a mode (a display target, video
/// planes); `end` disposes of it once cuda-gl's queued work is done.
pub(crate) fn assert_read_event_after_reads_in_every_mode<R>(
    (ctx, s): (&Context, &Arc<CudaStream>),
    (call, kernel_reads): (&str, bool),
    src: &CudaSlice<u8>,
    mut make: impl FnMut(Mode) -> R,
    mut read: impl FnMut(&mut R) -> crate::Result<()>,
    mut end: impl FnMut(R),
) {
    for mode in [Mode::Interop, Mode::Staged, Mode::Stream] {
        let mut reader = make(mode);
        let (ptr, event) = read_event_of(src, s);
        let (done, ops) = recording_ops(|| read(&mut reader));
        done.unwrap();
        let what = format!("{call} in {mode:?} mode");
        assert_recorded_after_reads(&what, &ops, (ptr, src.len()), kernel_reads, event, s);
        ctx.finish_queued().unwrap();
        end(reader);
    }
}

/// The end of a test: waits for `streams` in order, runs `drops` (any wait for cuda-gl's queued
/// work, then the test's drops, in order) and checks that no drop failed.
pub(crate) fn end_test(ctx: &Context, streams: &[&Arc<CudaStream>], drops: impl FnOnce()) {
    for stream in streams {
        stream.synchronize().unwrap();
    }
    drops();
    ctx.check_drop_errors().unwrap();
}

/// A cudarc context on device 0 and `N` of its streams, made in order.
pub(crate) fn cudarc_streams<const N: usize>() -> (Arc<CudaContext>, [Arc<CudaStream>; N]) {
    let cu = CudaContext::new(0).expect("cudarc context on device 0");
    let streams = [(); N].map(|()| cu.new_stream().expect("a cudarc stream"));
    (cu, streams)
}

/// What the GPU tests of cudarc's events run with ([`rig`]).
pub(crate) type Rig = (HeadlessContext, Arc<Context>, Spinner, [Arc<CudaStream>; 3]);

/// A headless GL context on CUDA device 0, current on this thread ([`on_gpu`]: `None` after
/// saying why where `test` cannot run), then a cudarc context on device 0 shared by a cuda-gl
/// `Context`, a [`Spinner`] in it, and three of its streams: the caller's, the spinner's and the
/// probe's. (Three streams also put cudarc in its multi-stream mode, where it records its
/// events.)
pub(crate) fn rig(test: &str) -> Option<Rig> {
    let gl = on_gpu(test)?;
    let (cu, streams) = cudarc_streams();
    let ctx = Context::from_cudarc(&cu).expect("Context::from_cudarc");
    let spinner = Spinner::new(&ctx);
    Some((gl, ctx, spinner, streams))
}

#[test]
fn cudarc_events_of_a_copy_follow_the_copy_not_later_work_on_the_private_stream() {
    let test = "cudarc_events_of_a_copy_follow_the_copy_not_later_work_on_the_private_stream";
    let Some((_gl, ctx, spinner, [s, t, u])) = rig(test) else {
        return;
    };
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
