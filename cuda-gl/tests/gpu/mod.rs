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
    AsStream, Context, Device, DeviceBuffer, DevicePtr, Error, Event, Function, ImageTarget,
    KernelArgs, KernelParam, LaunchConfig, Module, RegisterFlags, RegisteredBuffer,
    RegisteredImage, Stream, StreamFlags,
};
use gl_kit::upload::{self, Source};
use std::sync::Arc;
use std::time::Duration;

#[cfg(unix)]
pub mod external;

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

/// Registers texture `tex` for surface writes that replace its contents.
pub fn register_for_surface(ctx: &Arc<Context>, tex: u32, target: ImageTarget) -> RegisteredImage {
    RegisteredImage::register(
        ctx,
        tex,
        target,
        RegisterFlags::SURFACE_LOAD_STORE | RegisterFlags::WRITE_DISCARD,
    )
    .unwrap()
}

/// A one-level `width` x `height` RGBA8 2D texture, registered by [`register_for_surface`].
pub fn surface_texture_rgba8(
    ctx: &Arc<Context>,
    width: usize,
    height: usize,
) -> (u32, RegisteredImage) {
    let tex = gl_texture_rgba8(width as i32, height as i32, 1);
    (tex, register_for_surface(ctx, tex, ImageTarget::Texture2D))
}

/// Fails the test when GL has an error pending (each one named).
pub fn check_gl() {
    gl_kit::check("the test's GL calls").unwrap();
}

/// A GL buffer of `bytes` bytes, filled from `data` (at least `bytes` bytes) when given.
pub fn gl_buffer(bytes: usize, data: Option<&[u32]>) -> u32 {
    let data = data.map(gl_kit::plain::bytes_of);
    gl_kit::buffer::create(bytes, gl::DYNAMIC_DRAW, data).unwrap()
}

/// Reads a GL buffer's first `words` u32 words.
pub fn read_gl_buffer(name: u32, words: usize) -> Vec<u32> {
    gl_kit::buffer::read(name, words).unwrap()
}

/// A GL buffer of `bytes` bytes (contents undefined) and its registration in `ctx`.
pub fn registered_buffer(
    ctx: &Arc<Context>,
    bytes: usize,
    flags: RegisterFlags,
) -> (u32, RegisteredBuffer) {
    let name = gl_buffer(bytes, None);
    let res = RegisteredBuffer::register(ctx, name, flags).unwrap();
    (name, res)
}

/// Registers GL buffer `name`, which is registered in `ctx` already, again: checks that this
/// is refused as `AlreadyRegistered` and returns the error.
pub fn second_registration_refused(ctx: &Arc<Context>, name: u32) -> cuda_gl::Error {
    let err = RegisteredBuffer::register(ctx, name, RegisterFlags::NONE).unwrap_err();
    eprintln!("{err}");
    assert!(
        matches!(err, cuda_gl::Error::AlreadyRegistered { .. }),
        "{err:?}"
    );
    err
}

/// Checks that `result` is a refusal before the driver: a [`cuda_gl::Error::Usage`] whose
/// [`cuda_gl::UsageError`] passes `which` (e.g. `|e| matches!(e, UsageError::ReadOnlyMapping {
/// .. })`) and whose message contains `says`.
#[track_caller]
pub fn assert_refused<T>(
    result: cuda_gl::Result<T>,
    which: impl Fn(&cuda_gl::UsageError) -> bool,
    says: &str,
) {
    match result {
        Err(cuda_gl::Error::Usage(e)) if which(&e) && e.to_string().contains(says) => {}
        Err(err) => panic!("expected a refusal that says {says:?}, got {err:?}"),
        Ok(_) => panic!("expected a refusal that says {says:?}, but the call succeeded"),
    }
}

/// Drops `res` (its unregistration, whose failure is recorded for `check_drop_errors`), then
/// deletes GL buffer `name`: the registration goes before the GL object.
pub fn drop_and_delete_buffer(res: RegisteredBuffer, name: u32) {
    drop(res);
    delete_buffer(name);
}

/// Unregisters `res`, checks that no drop error was recorded in `ctx`, and deletes GL buffer
/// `name`.
pub fn unregister_and_delete(ctx: &Context, res: RegisteredBuffer, name: u32) {
    res.unregister().unwrap();
    ctx.check_drop_errors().unwrap();
    delete_buffer(name);
}

/// A GL texture or buffer that is deleted when this drops, also when the test fails half-way
/// (gl-kit's owned name). Bind it to a name (`_tex` keeps it, `_` deletes it at once) before
/// registering it: locals drop in reverse order, so the registration drops (is unregistered)
/// before the object is deleted. Derefs to the GL name.
pub use gl_kit::Owned as GlObject;
pub use gl_kit::buffer::delete as delete_buffer;
pub use gl_kit::texture::delete as delete_texture;

/// A size or count of the tests' GL objects as gl-kit takes it.
fn dim(value: impl TryInto<u32>) -> u32 {
    value.try_into().ok().expect("a size of at least 0")
}

/// A texture of `target` with `levels` levels of immutable RGBA8 storage, `width` x `height`
/// and, for the targets of `glTexStorage3D` (`TEXTURE_3D`, `TEXTURE_2D_ARRAY`), `depth` slices
/// or layers (ignored for the others). Contents undefined, filters left at GL's defaults.
pub fn gl_texture_storage(
    target: gl::types::GLenum,
    levels: i32,
    width: i32,
    height: i32,
    depth: i32,
) -> u32 {
    let size = (dim(width), dim(height), dim(depth));
    gl_kit::texture::storage(target, dim(levels), size).unwrap()
}

/// An RGBA8 2D texture with `levels` mip levels of immutable storage, nearest filtering.
pub fn gl_texture_rgba8(width: i32, height: i32, levels: i32) -> u32 {
    let (w, h) = (dim(width), dim(height));
    gl_kit::texture::rgba8(w, h, dim(levels), gl::NEAREST).unwrap()
}

/// Reads level `level` of an RGBA8 2D texture as packed u32 texels.
pub fn read_texture_rgba8(name: u32, width: usize, height: usize, level: i32) -> Vec<u32> {
    read_tex_image_rgba8(gl::TEXTURE_2D, name, level, width * height)
}

/// An RGBA8 2D array texture of `layers` layers of `width` x `height`, one level, filled with
/// `data` (every texel of every layer) when given.
pub fn gl_texture_array_rgba8(
    width: usize,
    height: usize,
    layers: usize,
    data: Option<&[u32]>,
) -> u32 {
    let size = (dim(width), dim(height), dim(layers));
    let name = gl_kit::texture::rgba8_array(size.0, size.1, size.2).unwrap();
    if let Some(data) = data {
        assert_eq!(data.len(), width * height * layers);
        let pixels = Source::Host(gl_kit::plain::bytes_of(data));
        upload::rgba8(gl::TEXTURE_2D_ARRAY, name, size, pixels).unwrap();
        check_gl();
    }
    name
}

/// Every layer of a `width` x `height` RGBA8 2D array texture, as packed u32 texels, layer after
/// layer.
pub fn read_texture_array_rgba8(name: u32, width: usize, height: usize, layers: usize) -> Vec<u32> {
    read_tex_image_rgba8(gl::TEXTURE_2D_ARRAY, name, 0, width * height * layers)
}

/// `glGetTexImage` of level `level` of texture `name` bound to `target`, as packed RGBA8 u32
/// texels (every layer, for an array); the level must have `texels` texels.
pub fn read_tex_image_rgba8(
    target: gl::types::GLenum,
    name: u32,
    level: i32,
    texels: usize,
) -> Vec<u32> {
    let out = gl_kit::readback::texture(target, name, level).unwrap();
    assert_eq!(
        out.len(),
        texels,
        "texels in level {level} of texture {name}"
    );
    out
}

/// A renderbuffer with RGBA8 storage of `width` x `height`.
pub fn gl_renderbuffer_rgba8(width: i32, height: i32) -> u32 {
    gl_kit::framebuffer::renderbuffer_rgba8(dim(width), dim(height)).unwrap()
}

/// Deletes renderbuffer `name`.
pub fn delete_renderbuffer(name: u32) {
    gl_kit::Kind::Renderbuffer.delete(name);
}

/// `glTexSubImage2D` of a whole `width` x `height` RGBA8 texture from pixel buffer `pbo` (a
/// GPU-side copy), then checks for a GL error.
pub fn upload_from_pbo(pbo: u32, tex: u32, width: usize, height: usize) {
    let size = (dim(width), dim(height), 1);
    upload::rgba8(gl::TEXTURE_2D, tex, size, Source::Buffer(pbo)).unwrap();
    check_gl();
}

/// `glTexSubImage2D` of `texels` (`width` x `height` packed RGBA8) into level 0 of 2D texture
/// `tex`, from client memory, then checks for a GL error.
pub fn upload_texels_rgba8(tex: u32, width: usize, height: usize, texels: &[u32]) {
    assert_eq!(texels.len(), width * height);
    let (size, pixels) = (
        (dim(width), dim(height), 1),
        gl_kit::plain::bytes_of(texels),
    );
    upload::rgba8(gl::TEXTURE_2D, tex, size, Source::Host(pixels)).unwrap();
    check_gl();
}

/// The debug label of GL buffer `name` in the current context (empty when it has none).
pub fn buffer_label(name: u32) -> String {
    let mut buf = [0u8; 64];
    let mut len = 0;
    // SAFETY: a context is current; `buf` has room for the stated size, `len` is valid.
    unsafe {
        gl::GetObjectLabel(
            gl::BUFFER,
            name,
            buf.len() as i32,
            &mut len,
            buf.as_mut_ptr().cast(),
        )
    };
    String::from_utf8_lossy(&buf[..len.max(0) as usize]).into_owned()
}

/// The handle of the EGL context current on this thread, asked of libEGL.
pub fn egl_current_context() -> usize {
    // SAFETY: libEGL is already loaded by the test's context; `eglGetCurrentContext` takes no
    // arguments and returns a handle.
    unsafe {
        let lib = libloading::Library::new("libEGL.so.1").unwrap();
        let f: libloading::Symbol<'_, unsafe extern "C" fn() -> *mut std::ffi::c_void> =
            lib.get(b"eglGetCurrentContext\0").unwrap();
        f() as usize
    }
}

/// Prints the EGL handles of a destroyed context (`old`) and of the context made after it
/// (`new`), and whether the new one got the old one's handle value.
pub fn print_handle_reuse(old: usize, new: usize) {
    let how = if old == new {
        "the handle value was reused"
    } else {
        "another handle"
    };
    eprintln!("old context {old:#x}, new context {new:#x}: {how}");
}

/// Sets the debug label of GL buffer `name` in the current context, as an application may.
pub fn set_buffer_label(name: u32, label: &str) {
    // SAFETY: a context is current; the pointer and length describe `label`.
    unsafe { gl::ObjectLabel(gl::BUFFER, name, label.len() as i32, label.as_ptr().cast()) };
    check_gl();
}

/// Whether `name` is a GL object of the current context, asked with `is` (`gl::IsBuffer`,
/// `gl::IsTexture`, `gl::IsFramebuffer`, ...).
pub fn gl_is(is: unsafe fn(u32) -> u8, name: u32) -> bool {
    // SAFETY: a context is current (the callers'); the `glIs*` queries change no state.
    unsafe { is(name) == gl::TRUE }
}
