//! A GPU test of an unmap after cuda-gl's private stream was left unordered with the map's
//! stream (`crate::queue`, step 4): a capture of the stream begun between the private work and
//! its join (which another thread may do at any moment, cudarc's `begin_capture` being safe),
//! while a kernel before the work on that stream spins past the wait limit. The join then
//! fails or orders only the graph, the wait for the work gives up with `Error::Timeout`, and
//! the work is still queued with nothing on the stream after it. An unmap on the stream must
//! not then run before or during the work (it would write GL memory after the unmap): it waits
//! for the private stream, and is refused (still mapped) when that does not end within the
//! limit. Before, it unmapped at once.
//!
//! Crate-internal: only a `run_now` work can begin the capture at exactly that point. Needs
//! the `egl` and `cudarc` features and a GPU; skips with the reason elsewhere, and fails with
//! `CUDA_GL_REQUIRE_GPU=1`. It spins past two wait limits (about 23 s with the default 10 s
//! limit, 9 s with `CUDA_GL_WAIT_LIMIT_MS=3000`); the limit itself is left alone, since the
//! crate's other tests run in the same process.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::egl::test_gl::{TEST_PTX, on_gpu};
use crate::glapi::GlOwner;
use crate::stream::AsStream;
use crate::{Context, DeviceBuffer, Error, LaunchConfig, Module, RegisterFlags, RegisteredBuffer};
use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use std::time::{Duration, Instant};

#[test]
fn an_unmap_after_a_copy_a_capture_left_unordered_waits_and_gives_up_after_the_wait_limit() {
    let test =
        "an_unmap_after_a_copy_a_capture_left_unordered_waits_and_gives_up_after_the_wait_limit";
    let Some(_gl) = on_gpu(test) else { return };
    let cu = cudarc::driver::CudaContext::new(0).expect("cudarc context on device 0");
    let stream = cu.new_stream().expect("cudarc stream");
    let ctx = Context::from_cudarc(&cu).unwrap();
    let kernels = Module::from_ptx(&ctx, TEST_PTX).expect("load the test kernels");
    // Past two waits of the limit (the join's, then the unmap's), with a margin.
    let spin = crate::wait_limit() * 2 + Duration::from_secs(3);
    let bytes = 4096;
    let (_, fns) = GlOwner::current("the test's GL buffer").unwrap();
    let mut name = 0;
    // SAFETY: a GL context is current (checked); a valid out-pointer; the buffer gets `bytes`
    // of storage with no data, and the array buffer binding is put back to none.
    unsafe {
        (fns.gen_buffers)(1, &mut name);
        (fns.bind_buffer)(gl::ARRAY_BUFFER, name);
        (fns.buffer_data)(
            gl::ARRAY_BUFFER,
            bytes as isize,
            std::ptr::null(),
            gl::DYNAMIC_DRAW,
        );
        (fns.bind_buffer)(gl::ARRAY_BUFFER, 0);
    }
    let mut res = RegisteredBuffer::register(&ctx, name, RegisterFlags::NONE).unwrap();
    let spinning = DeviceBuffer::<u32>::zeroed(&ctx, 256).unwrap();
    let mapped = res.map(&stream).unwrap();
    let target = mapped.device_ptr().as_raw();
    let fill = kernels.function("ext_fill_u32_slow").unwrap();
    let start = Instant::now();
    // SAFETY: the kernel writes the 256 words of `spinning`, which outlives it (the stream is
    // synchronized below before it drops); the arguments match `ext_fill_u32_slow(unsigned*,
    // unsigned, unsigned, unsigned long long)`.
    unsafe {
        let args = (spinning.device_ptr(), 256u32, 1u32, spin.as_nanos() as u64);
        fill.launch(LaunchConfig::for_elements(256), &stream, args)
    }
    .unwrap();
    // SAFETY: the stream is live and of the context. In the work: the memset writes the
    // mapping's `bytes`, which stay mapped until it has run (what the test checks) and
    // allocated (the GL buffer is deleted once the context is idle); `p` is the private stream.
    let queued = unsafe {
        ctx.run_now(stream.raw_stream(), "the test's memset", |p| {
            crate::result::mem::memset_d8_async(target, 0xAB, bytes, p)?;
            // What another thread may do at this moment: step 4 meets the capture.
            stream.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)?;
            Ok(())
        })
    };
    assert!(
        matches!(queued, Err(Error::Timeout { .. })),
        "the memset behind the spinning kernel with a capture begun before its join: expected \
         Error::Timeout from its wait, got {queued:?}"
    );
    // The capture ends (invalidated by the join, or a graph that only waits: never launched).
    let _ = stream
        .end_capture(CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH);
    let _ = cu.check_err();
    let unmapped = mapped.unmap();
    let at = start.elapsed();
    assert!(
        at < spin,
        "the test was too slow to check anything: the unmap returned {at:?} after the kernel \
         began to spin for {spin:?}"
    );
    match unmapped {
        Ok(()) => panic!(
            "the buffer was unmapped {at:?} after the kernel began to spin for {spin:?}, while \
             cuda-gl's memset into the mapping, queued after the kernel, had not run and nothing \
             ordered the unmap after it"
        ),
        Err(Error::Timeout { ref what, .. }) => {
            assert!(what.contains("unmapping"), "{unmapped:?}");
        }
        Err(e) => panic!("the unmap failed otherwise: {e:?}"),
    }
    assert!(res.is_mapped(), "a refused unmap left the buffer unmapped");
    // Once the work is done the next map recovers the mapping, and maps and unmaps with no wait.
    stream.synchronize().unwrap();
    ctx.finish_queued().unwrap();
    let again = res.map(&stream).unwrap();
    let words: Vec<u32> = cu_read(&again, &stream);
    assert!(
        words.iter().all(|&w| w == 0xABAB_ABAB),
        "the memset did not write the mapping"
    );
    again.unmap().unwrap();
    res.unregister().unwrap();
    drop(spinning);
    ctx.check_drop_errors().unwrap();
    // SAFETY: the GL context is current; the buffer is unregistered and not used after.
    unsafe { (fns.delete_buffers)(1, &name) };
}

/// The words of a mapped buffer, copied to the host on `stream` through cudarc.
fn cu_read(
    mapped: &crate::MappedBuffer<'_>,
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
) -> Vec<u32> {
    let mut words = vec![0u32; mapped.size() / 4];
    let src = mapped.device_ptr().as_raw();
    // SAFETY: `src` is the mapping's `size` bytes, mapped while `mapped` lives, and `words`
    // holds as many; the copy is waited for before returning.
    unsafe {
        cudarc::driver::result::memcpy_dtoh_async(&mut words, src, stream.cu_stream()).unwrap();
    }
    stream.synchronize().unwrap();
    words
}
