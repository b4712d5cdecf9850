//! GPU set-up for the tests: a headless GL context on the CUDA device under test, a CUDA
//! context and stream, the test kernels, and small GL helpers (over gl-kit, the workspace's GL
//! boilerplate, which panic on a GL error as a test should). Without a GPU it returns `None`
//! after printing why, or panics under `CUDA_GL_REQUIRE_GPU=1`. (`tests/harness` holds what
//! needs no GPU: knobs, log capture, child processes.)
// Each test binary uses part of this module (its helpers and re-exports).
#![allow(
    dead_code,
    unused_imports,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use cuda_gl::display::{DisplayTarget, Format, Layout, Mode, Report};
use cuda_gl::egl::HeadlessContext;
use cuda_gl::{
    AsStream, Context, Device, DeviceBuffer, DevicePtr, Error, Event, Function, KernelArgs,
    KernelParam, LaunchConfig, Module, Stream, StreamFlags,
};
use std::sync::Arc;
use std::time::Duration;

#[cfg(unix)]
pub mod external;
mod gl_helpers;
pub use gl_helpers::*;

/// The test kernels, compiled by `cargo xtask ptx`.
pub const TEST_PTX: &str = include_str!("../kernels/test_kernels.ptx");

/// Whether a GPU test that cannot run must fail instead of skipping.
pub fn require_gpu() -> bool {
    std::env::var("CUDA_GL_REQUIRE_GPU").is_ok_and(|v| v == "1")
}

/// Prints why a GPU test is skipped, or fails it under `CUDA_GL_REQUIRE_GPU=1`.
pub fn skip<T>(reason: impl std::fmt::Display) -> Option<T> {
    if require_gpu() {
        panic!("CUDA_GL_REQUIRE_GPU=1, but the GPU test cannot run: {reason}");
    }
    eprintln!("skipped: {reason}");
    None
}

/// Everything a GPU test needs. Field order is drop order: GL objects are deleted by the tests
/// before this drops; the CUDA side drops before the GL context.
pub struct Gpu {
    pub kernels: Module,
    pub stream: Stream,
    pub ctx: Arc<Context>,
    pub device: Device,
    pub gl: HeadlessContext,
}

impl Gpu {
    /// The last check of a test that has dropped its objects: no GL error is pending and the
    /// CUDA context recorded no drop error.
    pub fn check_no_errors(&self) {
        check_gl();
        self.ctx.check_drop_errors().unwrap();
    }
}

pub use crate::harness::noise;

/// A display target of `size` in RGBA8 in `ctx` and `mode` (`None`: the one `new` picks), with
/// its report, in the GL context current.
pub fn display_target(
    ctx: &Arc<Context>,
    size: (u32, u32),
    mode: Option<Mode>,
) -> (DisplayTarget, Report) {
    DisplayTarget::new(ctx, Layout::packed(size, Format::Rgba8).unwrap(), mode).unwrap()
}

/// Runs `test` on the test GPU (nothing, with the reason, where there is none) and a display
/// target of `size` in RGBA8 and `mode` on it, then drops the target and checks that nothing
/// went wrong ([`Gpu::check_no_errors`]).
pub fn on_display_target(
    size: (u32, u32),
    mode: Mode,
    test: impl FnOnce(&Gpu, &mut DisplayTarget),
) {
    let Some(g) = gpu() else { return };
    let (mut target, _) = display_target(&g.ctx, size, Some(mode));
    test(&g, &mut target);
    drop(target);
    g.check_no_errors();
}

/// The texels of `target`'s texture (RGBA8, one word each), read back by GL.
pub fn target_texels(target: &DisplayTarget) -> Vec<u32> {
    let (w, h) = target.size();
    read_texture_rgba8(target.texture().0, w as usize, h as usize, 0)
}

/// A GL context and a CUDA context on CUDA device `ordinal`.
pub fn gpu_on(ordinal: usize) -> Option<Gpu> {
    let (device, gl) = device_and_gl(ordinal)?;
    Some(gpu_with(device, gl))
}

/// CUDA device `ordinal` and a headless GL context on it (current on this thread); `None`
/// after [`skip`] says which is missing.
pub fn device_and_gl(ordinal: usize) -> Option<(Device, HeadlessContext)> {
    let device = match Device::get(ordinal) {
        Ok(d) => d,
        Err(e) => return skip(format!("no CUDA device {ordinal}: {e}")),
    };
    match HeadlessContext::for_cuda_device(&device) {
        Ok(gl) => Some((device, gl)),
        Err(e) => skip(format!(
            "no headless GL context on CUDA device {ordinal}: {e}"
        )),
    }
}

/// A CUDA context, stream and the test kernels on `device`, next to its GL context `gl` (made
/// before them).
pub fn gpu_with(device: Device, gl: HeadlessContext) -> Gpu {
    load_gl_crate(&gl);
    let ctx = Context::new(&device).expect("retain the primary context");
    let (stream, kernels) = stream_and_kernels(&ctx);
    Gpu {
        kernels,
        stream,
        ctx,
        device,
        gl,
    }
}

/// A non-blocking stream of `ctx` and the test kernels loaded in it.
pub fn stream_and_kernels(ctx: &Arc<Context>) -> (Stream, Module) {
    let stream = Stream::new(ctx, StreamFlags::NonBlocking).expect("create a stream");
    let kernels = Module::from_ptx(ctx, TEST_PTX).expect("load the test kernels");
    (stream, kernels)
}

/// Loads the `gl` crate's function pointers (which the tests' own GL calls use) from `gl`.
/// cuda-gl itself never calls them.
pub fn load_gl_crate(gl: &HeadlessContext) {
    gl::load_with(|name| gl.get_proc_address(name));
}

/// [`gpu_on`] device 0.
pub fn gpu() -> Option<Gpu> {
    gpu_on(0)
}

/// How far past cuda-gl's wait limit the bounded-wait tests' kernels spin: 3 s, or half the
/// limit when that is less, so that a call made once a drop gave up on the kernel can still wait
/// for the rest of the spin within its own limit (see `bounded_external_waits`).
pub fn spin_margin() -> Duration {
    (cuda_gl::wait_limit() / 2).min(Duration::from_secs(3))
}

/// How long the bounded-wait tests' kernels spin: past cuda-gl's wait limit
/// ([`cuda_gl::wait_limit`]: 10 s by default, 3 s under `ci/gpu/suite.sh`, which sets
/// `CUDA_GL_WAIT_LIMIT_MS` for them) by [`spin_margin`], so that each wait gives up while they run.
pub fn spin_past_the_limit() -> Duration {
    cuda_gl::wait_limit() + spin_margin()
}

/// A kernel of one block that spins for `spin` on `stream` (`ext_fill_u32_slow` of
/// `kernels`, the test kernels), so that the work queued after it is still waiting on the GPU
/// when the CPU goes on; it then writes `out`.
pub fn spin_on(kernels: &Module, out: &DeviceBuffer<u32>, stream: &Stream, spin: Duration) {
    // SAFETY: `out` holds its `len` words and outlives the work (the tests wait for their
    // stream before dropping it).
    unsafe { launch_spin(kernels, out.device_ptr(), out.len(), stream, spin) };
}

/// [`spin_on`] into `words` words at `out`.
///
/// # Safety
/// 1. `out` holds at least `words` u32 words and stays allocated (mapped) until the kernel has
///    run.
pub unsafe fn launch_spin(
    kernels: &Module,
    out: DevicePtr<'_>,
    words: usize,
    stream: &Stream,
    spin: Duration,
) {
    let fill = kernels.function("ext_fill_u32_slow").unwrap();
    let n = words as u32;
    // SAFETY: the kernel writes `n` words at `out`, which (1) keeps allocated; the arguments
    // match `ext_fill_u32_slow(unsigned*, unsigned, unsigned, unsigned long long)`.
    unsafe {
        fill.launch(
            LaunchConfig::for_elements(n),
            stream,
            (out, n, 1u32, spin.as_nanos() as u64),
        )
        .unwrap();
    }
}

/// [`launch_spin`] for [`spin_past_the_limit`] on the test's stream, then an event recorded
/// after it: `!event.query()` while the kernel still spins.
///
/// # Safety
/// As [`launch_spin`].
pub unsafe fn spin_into(g: &Gpu, out: DevicePtr<'_>, words: usize) -> Event {
    // SAFETY: the caller's.
    unsafe { launch_spin(&g.kernels, out, words, &g.stream, spin_past_the_limit()) };
    let end = Event::new(&g.ctx, false).unwrap();
    end.record(&g.stream).unwrap();
    end
}

/// Asserts that a wait of cuda-gl's that took `took` gave up at its limit
/// ([`cuda_gl::wait_limit`]), `what` naming the wait: from a tenth of the limit (at most 1 s)
/// before it, to two thirds of [`spin_margin`] after it (the time to notice), which ends before
/// the kernel that the wait is behind does (at the default 10 s: between 9 and 12 s, the kernel
/// spinning for 13). A wait that never gives up, or gives up at once, fails.
pub fn assert_took_the_limit(took: Duration, what: &str) {
    let limit = cuda_gl::wait_limit();
    let early = (limit / 10).min(Duration::from_secs(1));
    let late = spin_margin() * 2 / 3;
    println!("{what} took {took:?} (the limit is {limit:?})");
    assert!(
        (limit - early..limit + late).contains(&took),
        "{what} took {took:?}: the limit is {limit:?} (between {:?} and {:?} expected)",
        limit - early,
        limit + late
    );
}

/// Asserts that `result`, which took `took`, is the limit's `Error::Timeout`.
pub fn assert_gave_up<T>(result: cuda_gl::Result<T>, took: Duration, what: &str) {
    match result {
        Ok(_) => panic!("{what} did not give up: it waited {took:?}"),
        Err(e) => {
            println!("{what}: {e}");
            assert!(matches!(e, Error::Timeout { .. }), "{what}: {e:?}");
        }
    }
    assert_took_the_limit(took, what);
}

/// Drops `doomed` while the kernel that `end` follows (see [`spin_into`]) spins writing memory it
/// holds, and asserts that the drop (named `what`) gave up after the wait limit, that the kernel
/// then ends unharmed (a fault would mean the memory was freed or unmapped under it: leaked is
/// right), and that the drop recorded the timeouts of `waited_with` (see
/// [`assert_gave_up_in_drop`]); then that nothing else went wrong.
pub fn assert_drop_gives_up<T>(g: &Gpu, doomed: T, end: &Event, what: &str, waited_with: &[&str]) {
    let start = std::time::Instant::now();
    drop(doomed);
    assert_took_the_limit(start.elapsed(), what);
    assert!(
        !end.query().unwrap(),
        "the kernel ended before {what} gave up"
    );
    g.stream.synchronize().unwrap();
    assert_gave_up_in_drop(&g.ctx, waited_with);
    g.check_no_errors();
}

/// Asserts that the drops that gave up recorded it for `check_drop_errors`, and nothing else:
/// one `CUDA_ERROR_NOT_READY` per wait in `waited_with` (as each drop names it), in order.
pub fn assert_gave_up_in_drop(ctx: &Context, waited_with: &[&str]) {
    match ctx.check_drop_errors() {
        Err(Error::DeferredDrop(errors)) => {
            println!("recorded: {errors:?}");
            let calls: Vec<&str> = errors.iter().map(|e| e.call).collect();
            assert_eq!(calls, waited_with, "{errors:?}");
            assert!(
                errors.iter().all(|e| e.name == "CUDA_ERROR_NOT_READY"),
                "{errors:?}"
            );
        }
        other => panic!("the drop's timeout was not recorded: {other:?}"),
    }
}

/// Unrelated CUDA work: one block spinning on a stream of its own (the buffer it writes is
/// allocated before, since an allocation may wait for the context).
pub struct Busy {
    stream: Stream,
    out: DeviceBuffer<u32>,
    end: Event,
}

impl Busy {
    pub fn new(ctx: &Arc<Context>) -> Busy {
        Busy::on(ctx, StreamFlags::NonBlocking)
    }

    /// On a blocking stream: work on the legacy default stream waits for the spin.
    pub fn blocking(ctx: &Arc<Context>) -> Busy {
        Busy::on(ctx, StreamFlags::Blocking)
    }

    fn on(ctx: &Arc<Context>, flags: StreamFlags) -> Busy {
        Busy {
            stream: Stream::new(ctx, flags).unwrap(),
            out: DeviceBuffer::zeroed(ctx, 256).unwrap(),
            end: Event::new(ctx, false).unwrap(),
        }
    }

    /// Spins for `spin` from now on the GPU (`kernels`: the test kernels).
    pub fn start(&self, kernels: &Module, spin: Duration) {
        spin_on(kernels, &self.out, &self.stream, spin);
        self.end.record(&self.stream).unwrap();
    }

    /// Whether the spin has not ended yet.
    pub fn running(&self) -> bool {
        !self.end.query().unwrap()
    }

    /// Waits for the spin to end.
    pub fn wait(&self) {
        self.stream.synchronize().unwrap();
    }

    /// Asserts that `call` (named `what`) gave up after the limit with `Error::Timeout` while
    /// the spin still ran (the caller then checks what the call left, and waits).
    pub fn assert_gives_up<T>(&self, what: &str, call: impl FnOnce() -> cuda_gl::Result<T>) {
        let start = std::time::Instant::now();
        let result = call();
        assert_gave_up(result, start.elapsed(), what);
        assert!(self.running(), "the kernel ended before {what} gave up");
    }

    /// Asserts that `call` (named `what`), made while the spin runs, succeeds and returns while
    /// the spin still runs: it did not wait for the spin (a bounded wait for it gives up after
    /// the wait limit with `Error::Timeout`, an unbounded one returns once it has ended).
    pub fn assert_not_held_up<T>(
        &self,
        what: &str,
        call: impl FnOnce() -> cuda_gl::Result<T>,
    ) -> T {
        let start = std::time::Instant::now();
        let result = call();
        let took = start.elapsed();
        let running = self.running();
        println!("{what} took {took:?}; the spinning kernel still ran: {running}");
        let made = result
            .unwrap_or_else(|e| panic!("{what}, made while a kernel spins, after {took:?}: {e}"));
        assert!(
            running,
            "{what} returned after {took:?}, once the spinning kernel had ended: it waited for \
             it (or the driver's allocation did)"
        );
        made
    }

    /// Asserts that dropping `doomed` (named `what`) gave up after the limit while the spin still
    /// ran.
    pub fn assert_drop_gives_up<T>(&self, what: &str, doomed: T) {
        let start = std::time::Instant::now();
        drop(doomed);
        assert_took_the_limit(start.elapsed(), what);
        assert!(self.running(), "the kernel ended before {what} gave up");
    }
}

/// The test pattern of `test_kernels.cu`.
pub fn pattern(i: u32, seed: u32) -> u32 {
    i.wrapping_mul(2_654_435_761) ^ seed
}

pub fn pattern_words(n: usize, seed: u32) -> Vec<u32> {
    (0..n as u32).map(|i| pattern(i, seed)).collect()
}

/// Launches a 1-D kernel of the shape `kernel(ptr, unsigned n, arg)` (`fill_u32` and its kin)
/// over `words` elements.
///
/// # Safety
/// Those of [`Function::launch`]: `ptr` addresses `words` elements the kernel may touch, valid
/// (mapped) until the kernel is done in `stream`'s order.
pub unsafe fn launch_words<P: KernelParam, A: KernelParam>(
    kernel: &Function,
    stream: &impl AsStream,
    ptr: P,
    words: usize,
    arg: A,
) -> cuda_gl::Result<()> {
    // SAFETY: the caller's preconditions.
    unsafe { launch_elements(kernel, stream, words, (ptr, words as u32, arg)) }
}

/// Launches `kernel` with `args` over `elements` threads (`LaunchConfig::for_elements`): what
/// [`launch_words`] and the other 1-D launches of the tests share.
///
/// # Safety
/// Those of [`Function::launch`] for `args`.
pub unsafe fn launch_elements<A: KernelArgs>(
    kernel: &Function,
    stream: &impl AsStream,
    elements: usize,
    args: A,
) -> cuda_gl::Result<()> {
    // SAFETY: the caller's preconditions.
    unsafe { kernel.launch(LaunchConfig::for_elements(elements as u32), stream, args) }
}

/// Launches a 2-D kernel of the shape `kernel(image, int w, int h, arg)` (`surface_fill_rgba8`
/// and its kin) over `w` x `h` texels.
///
/// # Safety
/// Those of [`Function::launch`]: `image` covers `w` x `h` texels and stays valid (mapped) until
/// the kernel is done in `stream`'s order.
pub unsafe fn launch_image<I: KernelParam, A: KernelParam>(
    kernel: &Function,
    stream: &impl AsStream,
    image: I,
    (w, h): (usize, usize),
    arg: A,
) -> cuda_gl::Result<()> {
    // SAFETY: the caller's preconditions.
    unsafe {
        kernel.launch(
            LaunchConfig::for_image(w as u32, h as u32),
            stream,
            (image, w as i32, h as i32, arg),
        )
    }
}
