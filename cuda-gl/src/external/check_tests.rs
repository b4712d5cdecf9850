//! A GPU test of an import check that gives up with its put-back still queued: a kernel spinning
//! on a blocking stream is queued between the check's read and its put-back of the memory's first
//! 16 bytes (what another thread may do at that moment), so the put-back waits behind the kernel,
//! the check's wait for it gives up after the wait limit, and the import fails with
//! `Error::Timeout`, leaving it queued. A later write of the memory must not be overtaken by it:
//! `ExportableMemory::device_ptr` waits for it and gives up after the limit while it is queued;
//! once it has run, the address is handed out at once and a write with it (on a non-blocking
//! stream, which nothing orders after the legacy stream) stays. Before, the address was handed
//! out at once: such a write ran before the put-back, which then wrote the old bytes over it
//! (the first 4 words read back 0 instead of the written ones).
//!
//! Crate-internal: only a hook can queue the kernel at exactly that point. Needs the `egl`
//! feature and a GPU; skips with the reason elsewhere, and fails with `CUDA_GL_REQUIRE_GPU=1`.
//! It spins past two wait limits (about 23 s with the default 10 s limit, 9 s with
//! `CUDA_GL_WAIT_LIMIT_MS=3000`); the limit itself is left alone, since the crate's other tests
//! run in the same process.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::import::tests_hook;
use super::{ExportableMemory, ExternalGl, GlMemoryBuffer};
use crate::egl::test_gl::{TEST_PTX, on_gpu};
use crate::{
    Context, Device, DeviceBuffer, Error, Event, LaunchConfig, Module, Stream, StreamFlags, result,
    wait_limit,
};
use std::rc::Rc;
use std::time::{Duration, Instant};

/// Words of the test's memory, and of the spinning kernel's output.
const WORDS: usize = 256;

/// Asserts that `result`, which took `took`, is a timeout of `what` at the wait limit.
fn assert_gave_up_at_the_limit<T: std::fmt::Debug>(
    result: crate::Result<T>,
    took: Duration,
    what: &str,
) {
    println!("{what} took {took:?}: {result:?}");
    let e = match result {
        Ok(v) => panic!("{what} did not give up after {took:?}: {v:?}"),
        Err(e) => e,
    };
    assert!(matches!(e, Error::Timeout { .. }), "{what}: {e:?}");
    assert!(e.to_string().contains("help: "), "{what}: {e}");
    let limit = wait_limit();
    assert!(
        took >= limit - (limit / 10).min(Duration::from_secs(1)) && took < limit * 3 / 2,
        "{what} took {took:?}: the limit is {limit:?}"
    );
}

#[test]
fn a_put_back_an_import_check_left_queued_is_waited_for_before_the_memory_is_handed_out() {
    let test =
        "a_put_back_an_import_check_left_queued_is_waited_for_before_the_memory_is_handed_out";
    let Some(_gl) = on_gpu(test) else { return };
    let ctx = Context::new(&Device::get(0).unwrap()).unwrap();
    let kernels = Module::from_ptx(&ctx, TEST_PTX).expect("load the test kernels");
    let gl = ExternalGl::current().unwrap();
    let memory = ExportableMemory::new(&ctx, WORDS * 4).unwrap();
    // The bytes the check borrows, which its put-back must restore exactly (from values it
    // queued, not from host memory gone by the time the put-back runs).
    let before: [u32; 4] = [0xA1B2_C3D4, 0x0102_0304, 0xF0E1_D2C3, 0x5566_7788];
    ctx.bind().unwrap();
    // SAFETY: (1) the memory's first 16 bytes, of the bound context; (2) `before` holds 16 bytes,
    // read before the synchronous copy returns (waited for with the context below).
    unsafe { result::mem::copy_htod(memory.raw_ptr(), before.as_ptr().cast(), 16) }.unwrap();
    ctx.synchronize().unwrap();
    // Past two waits of the limit (the import's, then `device_ptr`'s), with a margin.
    let spin = wait_limit() * 2 + Duration::from_secs(3);
    let blocking = Rc::new(Stream::new(&ctx, StreamFlags::Blocking).unwrap());
    let spinning = Rc::new(DeviceBuffer::<u32>::zeroed(&ctx, WORDS).unwrap());
    let end = Rc::new(Event::new(&ctx, false).unwrap());
    let fill = kernels.function("ext_fill_u32_slow").unwrap();
    let (stream, out, ended) = (blocking.clone(), spinning.clone(), end.clone());
    tests_hook::set_after_the_read(move || {
        // SAFETY: the kernel writes the WORDS words of `out`, which outlives it (the stream is
        // synchronized below before it drops); the arguments match `ext_fill_u32_slow(unsigned*,
        // unsigned, unsigned, unsigned long long)`.
        unsafe {
            let args = (out.device_ptr(), WORDS as u32, 1u32, spin.as_nanos() as u64);
            fill.launch(LaunchConfig::for_elements(WORDS as u32), &*stream, args)
        }
        .unwrap();
        ended.record(&*stream).unwrap();
    });
    let start = Instant::now();
    let imported = GlMemoryBuffer::import(&gl, &memory);
    assert_gave_up_at_the_limit(imported, start.elapsed(), "the import");
    assert!(
        !end.query().unwrap(),
        "the kernel ended before the import gave up"
    );
    // The put-back is still queued behind the kernel: the address is not handed out.
    let start = Instant::now();
    let handed = memory.device_ptr().map(|p| p.as_raw());
    assert_gave_up_at_the_limit(handed, start.elapsed(), "device_ptr");
    assert!(
        !end.query().unwrap(),
        "the test was too slow to check anything: the kernel ended before device_ptr gave up"
    );
    blocking.synchronize().unwrap();
    // The put-back has run: the address comes at once, and a write with it stays.
    let start = Instant::now();
    let ptr = memory.device_ptr().unwrap().as_raw();
    ctx.bind().unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
    let mut back = [0u32; 4];
    // SAFETY: (1) the memory's first 16 bytes, allocated until its drop; (2) `back` has room for
    // 16 bytes.
    unsafe { result::mem::copy_dtoh(back.as_mut_ptr().cast(), ptr, 16) }.unwrap();
    assert_eq!(
        back, before,
        "the import check's put-back did not restore the bytes it borrowed"
    );
    let words: [u32; 4] = [0x1111_1111, 0x2222_2222, 0x3333_3333, 0x4444_4444];
    let other = Stream::new(&ctx, StreamFlags::NonBlocking).unwrap();
    // SAFETY: (1) the memory's first 16 bytes, allocated until its drop (after the stream's
    // synchronize); (2) `words` is staged before the call returns; (3) a live stream of the bound
    // context.
    unsafe { result::mem::copy_htod_async(ptr, words.as_ptr().cast(), 16, other.raw()) }.unwrap();
    other.synchronize().unwrap();
    // Whatever cuda-gl still had queued on the legacy stream has run too.
    Stream::legacy(&ctx).synchronize().unwrap();
    // SAFETY: (1) as above; (2) `back` has room for 16 bytes.
    unsafe { result::mem::copy_dtoh(back.as_mut_ptr().cast(), ptr, 16) }.unwrap();
    assert_eq!(
        back, words,
        "the import check's put-back overwrote a later write"
    );
    drop(memory);
    ctx.check_drop_errors().unwrap();
}
