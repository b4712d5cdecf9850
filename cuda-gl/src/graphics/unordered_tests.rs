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
//! The helpers below (a spinning kernel, captures, GL objects) serve the tests of
//! `crate::cudarc_interop::unordered_tests` too.
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
use crate::{
    Context, DeviceBuffer, Error, LaunchConfig, MappedBuffer, Module, RegisterFlags,
    RegisteredBuffer,
};
use cudarc::driver::CudaStream;
use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[test]
fn an_unmap_after_a_copy_a_capture_left_unordered_waits_and_gives_up_after_the_wait_limit() {
    let test =
        "an_unmap_after_a_copy_a_capture_left_unordered_waits_and_gives_up_after_the_wait_limit";
    let Some(_gl) = on_gpu(test) else { return };
    let cu = cudarc::driver::CudaContext::new(0).expect("cudarc context on device 0");
    let stream = cu.new_stream().expect("cudarc stream");
    let (ctx, spinner, name, mut res) = memset_setup(&cu);
    let mapped = res.map(&stream).unwrap();
    let start = Instant::now();
    let spin = spinner.spin(&stream);
    // What another thread may do right after the memset: step 4 meets the capture.
    let queued = memset_mapping(&ctx, &mapped, &stream, || begin_capture(&stream));
    assert!(
        matches!(queued, Err(Error::Timeout { .. })),
        "the memset behind the spinning kernel with a capture begun before its join: expected \
         Error::Timeout from its wait, got {queued:?}"
    );
    end_capture(&stream);
    assert_refused(mapped.unmap(), start.elapsed(), spin);
    assert_recovers_after_the_refused_unmap(&ctx, res, name, spinner, &stream, &stream);
}

/// The start of a test of [`memset_mapping`]'s memset left unordered: a `Context` on `cu`, its
/// spinning kernel, and a 4096-byte GL buffer (GL name returned) registered in it, unmapped.
pub(crate) fn memset_setup(
    cu: &Arc<cudarc::driver::CudaContext>,
) -> (Arc<Context>, Spinner, u32, RegisteredBuffer) {
    let ctx = Context::from_cudarc(cu).unwrap();
    let spinner = Spinner::new(&ctx);
    let bytes = 4096;
    let name = gl_buffer(bytes);
    let res = RegisteredBuffer::register(&ctx, name, RegisterFlags::NONE).unwrap();
    (ctx, spinner, name, res)
}

/// The end of a test whose unmap of buffer `res` (GL name `name`) was refused while
/// [`memset_mapping`]'s memset waited behind `spinner`'s kernel on `spun`: the buffer is still
/// mapped; once that work is done, the next map on `stream` recovers the mapping, which holds
/// the memset, and maps and unmaps with no wait; then the buffer, the kernel and the GL buffer
/// go with no drop error. Shared by the tests that leave the memset unordered in different
/// ways (a capture at the join, or after cudarc's wait).
pub(crate) fn assert_recovers_after_the_refused_unmap(
    ctx: &Context,
    mut res: RegisteredBuffer,
    name: u32,
    spinner: Spinner,
    spun: &Arc<CudaStream>,
    stream: &Arc<CudaStream>,
) {
    assert!(res.is_mapped(), "a refused unmap left the buffer unmapped");
    spun.synchronize().unwrap();
    ctx.finish_queued().unwrap();
    let again = res.map(stream).unwrap();
    assert_memset(&again, stream);
    again.unmap().unwrap();
    res.unregister().unwrap();
    drop(spinner);
    ctx.check_drop_errors().unwrap();
    delete_gl_buffer(name);
}

/// Queues a memset of 0xAB over the mapping of `mapped` on `ctx`'s private stream, in
/// `stream`'s order; `during` runs right after it, before the run's join (step 4).
///
/// # Errors
/// As `Context::run_now`.
pub(crate) fn memset_mapping(
    ctx: &Context,
    mapped: &MappedBuffer<'_>,
    stream: &Arc<CudaStream>,
    during: impl FnOnce(),
) -> crate::Result<()> {
    let (target, bytes) = (mapped.device_ptr().as_raw(), mapped.size());
    // SAFETY: the stream is live and of the context. In the work: the memset writes the
    // mapping's `bytes`, which stay mapped until it has run (what the tests check) and
    // allocated (the GL buffer is deleted once the context is idle); `p` is the private stream.
    unsafe {
        ctx.run_now(stream.raw_stream(), "the test's memset", |p| {
            crate::result::mem::memset_d8_async(target, 0xAB, bytes, p)?;
            during();
            Ok(())
        })
    }
}

/// Checks that the memset of [`memset_mapping`] wrote the mapping of `mapped`.
pub(crate) fn assert_memset(mapped: &MappedBuffer<'_>, stream: &Arc<CudaStream>) {
    assert!(
        cu_read(mapped, stream).iter().all(|&w| w == 0xABAB_ABAB),
        "the memset did not write the mapping"
    );
}

/// An unmap's answer, `at` after a kernel began to spin for `spin`, while cuda-gl's copy or
/// memset into the mapping, queued after the kernel, has not run: refused with a timeout (still
/// mapped), not unmapped.
pub(crate) fn assert_refused(unmapped: crate::Result<()>, at: Duration, spin: Duration) {
    assert!(
        at < spin,
        "the test was too slow to check anything: the unmap returned {at:?} after the kernel \
         began to spin for {spin:?}"
    );
    match unmapped {
        Ok(()) => panic!(
            "the buffer was unmapped {at:?} after the kernel began to spin for {spin:?}, while \
             cuda-gl's work into the mapping, queued after the kernel, had not run and nothing \
             ordered the unmap after it"
        ),
        Err(Error::Timeout { ref what, .. }) => {
            assert!(what.contains("unmapping"), "{unmapped:?}");
        }
        Err(e) => panic!("the unmap failed otherwise: {e:?}"),
    }
}

/// The words of a mapped buffer, copied to the host on `stream` through cudarc.
pub(crate) fn cu_read(mapped: &MappedBuffer<'_>, stream: &Arc<CudaStream>) -> Vec<u32> {
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

/// A kernel that spins on a stream past the wait limits of a test: `ext_fill_u32_slow` over
/// memory of its own.
pub(crate) struct Spinner {
    kernels: Module,
    memory: DeviceBuffer<u32>,
}

impl Spinner {
    /// The test kernels, loaded in `ctx`, and the 256 words they write.
    pub(crate) fn new(ctx: &Arc<Context>) -> Spinner {
        Spinner {
            kernels: Module::from_ptx(ctx, TEST_PTX).expect("load the test kernels"),
            memory: DeviceBuffer::<u32>::zeroed(ctx, 256).expect("the spinning kernel's words"),
        }
    }

    /// Launches the kernel on `stream`, spinning past two waits of the limit (a run's, then
    /// an unmap's) with a margin; returns how long it spins.
    pub(crate) fn spin(&self, stream: &Arc<CudaStream>) -> Duration {
        let spin = crate::wait_limit() * 2 + Duration::from_secs(3);
        self.spin_for(stream, spin);
        spin
    }

    /// Launches the kernel on `stream`, spinning for `spin`.
    pub(crate) fn spin_for(&self, stream: &Arc<CudaStream>, spin: Duration) {
        let fill = self.kernels.function("ext_fill_u32_slow").unwrap();
        // SAFETY: the kernel writes the 256 words of `memory`, which the test keeps until the
        // stream is synchronized (dropping a `Spinner` frees them with `cuMemFree`, which waits
        // for the device); the arguments match `ext_fill_u32_slow(unsigned*, unsigned,
        // unsigned, unsigned long long)`.
        unsafe {
            let args = (
                self.memory.device_ptr(),
                256u32,
                1u32,
                spin.as_nanos() as u64,
            );
            fill.launch(LaunchConfig::for_elements(256), stream, args)
        }
        .expect("launch the spinning kernel");
    }
}

/// Begins a relaxed capture of `stream`, as another thread may at any moment.
pub(crate) fn begin_capture(stream: &CudaStream) {
    stream
        .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)
        .expect("the test could not begin the capture of its stream (cuStreamBeginCapture)");
}

/// Ends the capture of `stream` begun by [`begin_capture`], whatever became of it (invalidated
/// by cuda-gl's join, or a graph that only waits: never launched), and clears the error that
/// cudarc recorded meanwhile.
pub(crate) fn end_capture(stream: &Arc<CudaStream>) {
    let _ = stream
        .end_capture(CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH);
    let _ = stream.context().check_err();
}

/// A GL buffer of `bytes` bytes with no data, in the current GL context.
pub(crate) fn gl_buffer(bytes: usize) -> u32 {
    let (_, fns) = GlOwner::current("the test's GL buffer").unwrap();
    let name = fns.new_buffer(gl::ARRAY_BUFFER, bytes, gl::DYNAMIC_DRAW);
    // SAFETY: a GL context is current (checked); the array buffer binding is put back to none.
    unsafe { (fns.bind_buffer)(gl::ARRAY_BUFFER, 0) };
    name
}

/// Deletes GL buffer `name` of [`gl_buffer`], unregistered.
pub(crate) fn delete_gl_buffer(name: u32) {
    let (_, fns) = GlOwner::current("the test's GL buffer").unwrap();
    // SAFETY: the GL context is current; the buffer is unregistered and not used after.
    unsafe { (fns.delete_buffers)(1, &name) };
}

/// An RGBA8 GL texture of `w` x `h` texels holding `words`, in the current GL context.
pub(crate) fn gl_texture(w: usize, h: usize, words: &[u32]) -> u32 {
    assert_eq!(words.len(), w * h, "the texture's words");
    let (_, fns) = GlOwner::current("the test's GL texture").unwrap();
    let mut name = 0;
    // SAFETY: a GL context is current (checked); a valid out-pointer; `words` holds the
    // `w * h` RGBA8 texels read (checked); the 2-D texture binding is put back to none.
    unsafe {
        (fns.gen_textures)(1, &mut name);
        (fns.bind_texture)(gl::TEXTURE_2D, name);
        (fns.tex_parameteri)(gl::TEXTURE_2D, gl::TEXTURE_MIN_FILTER, gl::NEAREST as i32);
        (fns.tex_parameteri)(gl::TEXTURE_2D, gl::TEXTURE_MAG_FILTER, gl::NEAREST as i32);
        (fns.tex_image_2d)(
            gl::TEXTURE_2D,
            0,
            gl::RGBA8 as i32,
            w as i32,
            h as i32,
            0,
            gl::RGBA,
            gl::UNSIGNED_BYTE,
            words.as_ptr().cast(),
        );
        (fns.bind_texture)(gl::TEXTURE_2D, 0);
    }
    name
}

/// Deletes GL texture `name` of [`gl_texture`], unregistered.
pub(crate) fn delete_gl_texture(name: u32) {
    let (_, fns) = GlOwner::current("the test's GL texture").unwrap();
    // SAFETY: the GL context is current; the texture is unregistered and not used after.
    unsafe { (fns.delete_textures)(1, &name) };
}
