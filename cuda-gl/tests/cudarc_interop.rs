//! cuda-gl with cudarc on a real GPU: one driver library and one set of handles for both crates,
//! GL buffers registered in a cudarc context and mapped on cudarc streams, cudarc kernels and
//! copies reading and writing them, and the context shared without a second retain. Needs
//! `--features cudarc,egl` and a GPU; skips with a reason elsewhere (fails under
//! `CUDA_GL_REQUIRE_GPU=1`).
//!
//! A binary of its own, not a module of `gpu_suite`: a test checks that the primary context of
//! device 0 is as retained after it as before it (`cuDevicePrimaryCtxGetState`), which a GPU
//! test of another module running beside it in the process (`cargo test` runs tests in
//! parallel) would upset, as each one retains that context; the tests here take a lock so that
//! they do not upset each other. It also needs two features (`required-features` in Cargo.toml).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

/// Copies between mapped textures and cudarc memory.
#[path = "cudarc_interop/array_copies.rs"]
mod array_copies;
/// Graph captures (cudarc's `begin_capture` is safe) against cuda-gl's stream-ordered calls.
#[path = "cudarc_interop/captures.rs"]
mod captures;
mod gpu;
// `gpu` re-exports the harness's `noise`.
mod harness;

use cuda_gl::egl::HeadlessContext;
use cuda_gl::{
    AsStream, Context, Device, Error, Event, RegisterFlags, RegisteredBuffer, Stream, StreamFlags,
    UsageError, map_all,
};
use cudarc::driver::{CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;
use gpu::{
    assert_refused, check_gl, delete_buffer, gl_buffer, pattern_words, read_gl_buffer,
    registered_buffer, skip, unregister_and_delete,
};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard};

/// The example's kernel: `xor_gradient_rgba8(unsigned*, unsigned width, unsigned height,
/// unsigned frame)`.
const PTX: &str = include_str!("../examples/kernels/cudarc_interop.ptx");

/// The tests count primary-context retains, so they run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What the kernel XORs into pixel (x, y): r = x, g = y, b = frame, a = 255 (mod 256).
fn gradient(x: u32, y: u32, frame: u32) -> u32 {
    (x & 0xff) | ((y & 0xff) << 8) | ((frame & 0xff) << 16) | (0xff << 24)
}

/// A GL context and the application's cudarc objects on device 0, plus cuda-gl's view of the
/// cudarc context, held under the [`serial`] lock. Field order is drop order: cudarc and cuda-gl
/// before the GL context, and the lock last.
struct Rig {
    kernel: CudaFunction,
    stream: Arc<CudaStream>,
    ctx: Arc<Context>,
    cu: Arc<CudaContext>,
    _gl: HeadlessContext,
    _serial: MutexGuard<'static, ()>,
}

/// A `w` x `h` RGBA8 GL texture registered in the rig's context with no flags.
fn registered_texture(r: &Rig, w: usize, h: usize) -> (u32, cuda_gl::RegisteredImage) {
    let texture = gpu::gl_texture_rgba8(w as i32, h as i32, 1);
    let image = cuda_gl::RegisteredImage::register(
        &r.ctx,
        texture,
        cuda_gl::ImageTarget::Texture2D,
        RegisterFlags::NONE,
    )
    .unwrap();
    (texture, image)
}

/// The end of a test on a registered texture: drops `image`, checks that the rig's context
/// recorded no drop error, deletes GL texture `texture` and checks that GL has no error pending.
fn drop_and_delete_texture(r: &Rig, image: cuda_gl::RegisteredImage, texture: u32) {
    drop(image);
    r.ctx.check_drop_errors().unwrap();
    gpu::delete_texture(texture);
    check_gl();
}

/// A headless GL context on CUDA device 0, current on this thread.
fn gl_on_device_0() -> Option<HeadlessContext> {
    // cuda-gl first: it reports a missing driver as an error, where cudarc would panic.
    let device = match Device::get(0) {
        Ok(d) => d,
        Err(e) => return skip(format!("no CUDA device 0: {e}")),
    };
    match HeadlessContext::for_cuda_device(&device) {
        Ok(gl) => {
            gpu::load_gl_crate(&gl);
            Some(gl)
        }
        Err(e) => skip(format!("no headless GL context on CUDA device 0: {e}")),
    }
}

/// The [`Rig`], or `None` (after saying why) where this machine cannot make it.
fn rig() -> Option<Rig> {
    let serial = serial();
    let gl = gl_on_device_0()?;
    let cu = CudaContext::new(0).expect("cudarc context on device 0");
    let stream = cu.new_stream().expect("cudarc stream");
    let kernel = cu
        .load_module(Ptx::from_src(PTX))
        .expect("load the PTX through cudarc")
        .load_function("xor_gradient_rgba8")
        .expect("xor_gradient_rgba8");
    let ctx = Context::from_cudarc(&cu).expect("share the cudarc context");
    Some(Rig {
        kernel,
        stream,
        ctx,
        cu,
        _gl: gl,
        _serial: serial,
    })
}

/// The distinct files named `libcuda.so*` mapped into this process.
fn mapped_libcuda_files() -> BTreeSet<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").expect("read /proc/self/maps");
    maps.lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .filter(|path| {
            path.rsplit('/')
                .next()
                .is_some_and(|name| name.starts_with("libcuda.so"))
        })
        .map(str::to_owned)
        .collect()
}

/// Whether the primary context of `device` is retained by anyone in the process.
fn primary_active(device: i32) -> bool {
    let driver = cuda_gl::sys::driver().unwrap();
    let (mut flags, mut active) = (0u32, 0i32);
    // SAFETY: both are valid out-pointers; `device` is a valid ordinal.
    let rc = unsafe { driver.cuDevicePrimaryCtxGetState(device, &mut flags, &mut active) };
    assert!(rc.is_success(), "cuDevicePrimaryCtxGetState: {rc:?}");
    active != 0
}

#[test]
fn both_crates_use_one_driver_library_and_the_same_handles() {
    let Some(r) = rig() else { return };

    // One libcuda file mapped, after both crates have opened and used theirs.
    let files = mapped_libcuda_files();
    eprintln!("libcuda mapped: {files:?}");
    assert_eq!(files.len(), 1, "more than one libcuda is mapped: {files:?}");

    // The same entry points: cudarc's library handle and cuda-gl's resolve to one address.
    // SAFETY: culib() opens (or returns) cudarc's driver library; the symbols are only compared.
    let cudarc_lib = unsafe { cudarc::driver::sys::culib() };
    let driver = cuda_gl::sys::driver().unwrap();
    for (name, ours) in [
        ("cuCtxGetCurrent", driver.cuCtxGetCurrent as usize),
        ("cuStreamCreate", driver.cuStreamCreate as usize),
        (
            "cuGraphicsMapResources",
            driver.cuGraphicsMapResources as usize,
        ),
    ] {
        // SAFETY: the symbol is looked up as an opaque function pointer and only compared.
        let theirs = unsafe { cudarc_lib.get::<unsafe extern "C" fn()>(name.as_bytes()) }
            .unwrap_or_else(|e| panic!("cudarc's library lacks {name}: {e}"));
        assert_eq!(*theirs as usize, ours, "{name} resolves differently");
    }

    // The same context: cuda-gl's shared one, and cuda-gl's own retain of the primary context.
    let cu_raw: cuda_gl::sys::CUcontext = r.cu.cu_ctx().cast();
    assert_eq!(r.ctx.raw(), cu_raw);
    assert_eq!(r.ctx.device().raw(), r.cu.cu_device());
    let own = Context::new(&Device::get(0).unwrap()).unwrap();
    assert_eq!(
        own.raw(),
        cu_raw,
        "the primary context differs between the crates"
    );
    drop(own);
    // A context bound by cudarc is the current one for cuda-gl's driver.
    // SAFETY: the context is live; null is unbound first so the bind is observable.
    unsafe { driver.cuCtxSetCurrent(std::ptr::null_mut()) };
    r.cu.bind_to_thread().unwrap();
    let mut current = std::ptr::null_mut();
    // SAFETY: `current` is a valid out-pointer.
    let rc = unsafe { driver.cuCtxGetCurrent(&mut current) };
    assert!(rc.is_success());
    assert_eq!(current, cu_raw);

    // A cudarc stream is a cuda-gl stream: an event of cuda-gl records on it.
    assert_eq!(r.stream.raw_stream(), r.stream.cu_stream().cast());
    assert_eq!(r.stream.raw_context(), cu_raw);
    let event = Event::new(&r.ctx, false).unwrap();
    event.record(&r.stream).unwrap();
    event.synchronize().unwrap();
    r.ctx.check_drop_errors().unwrap();
}

#[test]
fn cudarc_kernel_writes_a_gl_buffer_mapped_on_a_cudarc_stream() {
    let Some(r) = rig() else { return };
    let (width, height, frame) = (333u32, 77u32, 5u32);
    let n = (width * height) as usize;
    let before = pattern_words(n, 0x5eed);
    let name = gl_buffer(n * 4, Some(&before));
    let mut res = RegisteredBuffer::register(&r.ctx, name, RegisterFlags::NONE).unwrap();

    let mut mapped = res.map(&r.stream).unwrap();
    assert_eq!(mapped.raw_stream(), r.stream.cu_stream().cast());
    // SAFETY: (1) no other thread captures on this stream meanwhile.
    let mut view = unsafe { mapped.as_cudarc_slice_mut::<u32>() }.unwrap();
    assert_eq!(view.len(), n);
    let config = LaunchConfig {
        grid_dim: (width.div_ceil(16), height.div_ceil(16), 1),
        block_dim: (16, 16, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the kernel takes (unsigned*, unsigned, unsigned, unsigned) and touches width *
    // height words, the view's length; it runs on the stream of the map.
    unsafe {
        r.stream
            .launch_builder(&r.kernel)
            .arg(&mut view)
            .arg(&width)
            .arg(&height)
            .arg(&frame)
            .launch(config)
    }
    .unwrap();
    mapped.unmap().unwrap();

    let after = read_gl_buffer(name, n);
    let mut wrong = 0;
    for y in 0..height {
        for x in 0..width {
            let i = (y * width + x) as usize;
            if after[i] != before[i] ^ gradient(x, y, frame) {
                wrong += 1;
            }
        }
    }
    assert_eq!(wrong, 0, "{wrong} of {n} words differ");
    r.cu.check_err().unwrap();
    unregister_and_delete(&r.ctx, res, name);
    check_gl();
}

#[test]
fn cudarc_copies_read_and_write_the_mapping_on_any_stream_of_the_context() {
    let Some(r) = rig() else { return };
    let n = 100_000;
    let initial = pattern_words(n, 1);
    let first = pattern_words(n, 2);
    let second = pattern_words(n, 3);
    let name = gl_buffer(n * 4, Some(&initial));
    let mut res = RegisteredBuffer::register(&r.ctx, name, RegisterFlags::NONE).unwrap();
    let other = r.cu.new_stream().unwrap();

    // No unsafe from here to the GL read: cudarc's copies take the views.
    let mut mapped = res.map(&r.stream).unwrap();
    // SAFETY: (1) no other thread captures on this stream meanwhile.
    let view = unsafe { mapped.as_cudarc_slice::<u32>() }.unwrap();
    assert_eq!(
        r.stream.clone_dtoh(&view).unwrap(),
        initial,
        "read GL's data"
    );
    // SAFETY: (1) no other thread captures on this stream meanwhile.
    let mut view = unsafe { mapped.as_cudarc_slice_mut::<u32>() }.unwrap();
    r.stream.memcpy_htod(&first, &mut view).unwrap();
    // On another stream of the context: it waits for the map stream's copy, and finishes
    // before the call returns.
    assert_eq!(other.clone_dtoh(&view).unwrap(), first, "other stream read");
    other.memcpy_htod(&second, &mut view).unwrap();
    // SAFETY: (1) no other thread captures on this stream meanwhile.
    let bytes = unsafe { mapped.as_cudarc_slice::<u8>() }.unwrap();
    assert_eq!(bytes.len(), n * 4);
    mapped.unmap().unwrap();

    assert_eq!(read_gl_buffer(name, n), second, "GL reads the last copy");
    r.cu.check_err().unwrap();
    drop(res);
    r.ctx.check_drop_errors().unwrap();
    delete_buffer(name);
}

#[test]
fn batch_map_on_a_cudarc_stream() {
    let Some(r) = rig() else { return };
    let n = 4096;
    let source = pattern_words(n, 9);
    let (a_name, b_name) = (gl_buffer(n * 4, Some(&source)), gl_buffer(n * 4, None));
    let mut a = RegisteredBuffer::register(&r.ctx, a_name, RegisterFlags::READ_ONLY).unwrap();
    let mut b = RegisteredBuffer::register(&r.ctx, b_name, RegisterFlags::WRITE_DISCARD).unwrap();
    // A buffer mapped on its own, outside the batch: `pick` may return it (its borrow outlives
    // the batch), and the batch refuses to make a view of it.
    let other_name = gl_buffer(n * 4, None);
    let mut other = RegisteredBuffer::register(&r.ctx, other_name, RegisterFlags::NONE).unwrap();
    let other_mapped = other.map(&r.stream).unwrap();

    let mut batch = map_all((&mut a, &mut b), &r.stream).unwrap();
    // SAFETY: (1) no other thread captures on this stream meanwhile.
    let refused = unsafe { batch.as_cudarc_slice_mut::<u32>(|_| &other_mapped) }.err();
    assert!(
        matches!(
            refused,
            Some(Error::Usage(UsageError::NotOfThisBatch { .. }))
        ),
        "{refused:?}"
    );
    let read = r
        .stream
        // SAFETY: (1) no other thread captures on this stream meanwhile.
        .clone_dtoh(&unsafe { batch.0.as_cudarc_slice::<u32>() }.unwrap())
        .unwrap();
    assert_eq!(read, source);
    // The READ_ONLY buffer refuses a mutable view.
    // SAFETY: (1) no other thread captures on this stream meanwhile.
    let refused = unsafe { batch.as_cudarc_slice_mut::<u32>(|v| &v.0) }.err();
    assert!(
        matches!(
            refused,
            Some(Error::Usage(UsageError::ReadOnlyMapping { .. }))
        ),
        "{refused:?}"
    );
    // SAFETY: (1) no other thread captures on this stream meanwhile.
    let mut target = unsafe { batch.as_cudarc_slice_mut::<[u32; 4]>(|v| &v.1) }.unwrap();
    assert_eq!(target.len(), n / 4);
    let quads: Vec<[u32; 4]> = read
        .chunks_exact(4)
        .map(|c| [c[3], c[2], c[1], c[0]])
        .collect();
    r.stream.memcpy_htod(&quads, &mut target).unwrap();
    batch.unmap().unwrap();

    let expected: Vec<u32> = quads.iter().flatten().copied().collect();
    assert_eq!(read_gl_buffer(b_name, n), expected);
    other_mapped.unmap().unwrap();
    drop((a, b, other));
    r.ctx.check_drop_errors().unwrap();
    delete_buffer(a_name);
    delete_buffer(b_name);
    delete_buffer(other_name);
}

#[test]
fn views_refuse_bad_layouts_and_streams_that_are_not_arc_cuda_streams() {
    let Some(r) = rig() else { return };
    let name = gl_buffer(10, Some(&[0; 3]));
    let mut res = RegisteredBuffer::register(&r.ctx, name, RegisterFlags::NONE).unwrap();

    let mapped = res.map(&r.stream).unwrap();
    // SAFETY: (1) no other thread captures on this stream meanwhile.
    let err = unsafe { mapped.as_cudarc_slice::<u32>() }.unwrap_err();
    assert!(
        matches!(
            err,
            Error::SliceLayout {
                bytes: 10,
                type_size: 4,
                ..
            }
        ),
        "{err}"
    );
    // SAFETY: (1) no other thread captures on this stream meanwhile.
    assert_eq!(unsafe { mapped.as_cudarc_slice::<u8>() }.unwrap().len(), 10);
    mapped.unmap().unwrap();

    // A plain &CudaStream maps (the unmap runs on it), but has no Arc to lend the view.
    let plain: &CudaStream = &r.stream;
    let mapped = res.map(plain).unwrap();
    // SAFETY: (1) no other thread captures on this stream meanwhile.
    assert_refused(
        unsafe { mapped.as_cudarc_slice::<u8>() },
        |e| matches!(e, UsageError::NeedsCudarcStream),
        "Arc<",
    );
    mapped.unmap().unwrap();

    // So does cuda-gl's own stream in the shared context.
    let stream = Stream::new(&r.ctx, StreamFlags::NonBlocking).unwrap();
    let mapped = res.map(&stream).unwrap();
    // SAFETY: (1) no other thread captures on this stream meanwhile.
    assert!(unsafe { mapped.as_cudarc_slice::<u8>() }.is_err());
    mapped.unmap().unwrap();

    unregister_and_delete(&r.ctx, res, name);
}

#[test]
fn the_shared_context_adds_no_retain_and_keeps_cudarc_alive() {
    let _serial = serial();
    let Some(gl) = gl_on_device_0() else { return };
    let device = 0;
    // With nothing of this test holding it, the primary context is retained by no one, unless
    // something outside the test (such as the GL driver) holds it: then only the balance of
    // retains can be checked below.
    let held_elsewhere = primary_active(device);
    eprintln!("primary context held outside the test: {held_elsewhere}");
    let no_retain_left = || {
        assert_eq!(
            primary_active(device),
            held_elsewhere,
            "a retain is left over"
        );
    };

    // cuda-gl dropped first: cudarc's retain is untouched.
    let cu = CudaContext::new(0).unwrap();
    let ctx = Context::from_cudarc(&cu).unwrap();
    drop(ctx);
    assert!(primary_active(device));
    let zeros = cu.default_stream().alloc_zeros::<u32>(16).unwrap();
    assert_eq!(cu.default_stream().clone_dtoh(&zeros).unwrap(), vec![0; 16]);
    drop(zeros);
    cu.check_err().unwrap();
    drop(cu);
    no_retain_left();

    // cudarc's handle dropped first: cuda-gl's Arc keeps the context, which still works.
    let cu = CudaContext::new(0).unwrap();
    let ctx = Context::from_cudarc(&cu).unwrap();
    let weak = Arc::downgrade(&cu);
    drop(cu);
    assert!(
        weak.upgrade().is_some(),
        "cuda-gl keeps the cudarc context alive"
    );
    let (name, mut res) = registered_buffer(&ctx, 256, RegisterFlags::NONE);
    let stream = Stream::new(&ctx, StreamFlags::NonBlocking).unwrap();
    res.map(&stream).unwrap().unmap().unwrap();
    drop((res, stream));
    ctx.synchronize().unwrap();
    drop(ctx);
    assert!(
        weak.upgrade().is_none(),
        "the cudarc context went with cuda-gl's last handle"
    );
    no_retain_left();
    delete_buffer(name);
    drop(gl);
}

/// A cudarc kernel writes a mapped GL texture through cuda-gl's surface handle, passed as a
/// cudarc kernel argument (`arg(&surface)`), and a second one through the owning surface object
/// (`arg(&object)`); GL reads both patterns back.
#[test]
fn a_cudarc_kernel_writes_a_mapped_texture_through_a_surface() {
    let Some(r) = rig() else { return };
    let (w, h) = (64usize, 32usize);
    let module =
        r.cu.load_module(Ptx::from_src(gpu::TEST_PTX))
            .expect("load the test kernels through cudarc");
    let fill = module.load_function("surface_fill_rgba8").unwrap();
    let (texture, mut image) = gpu::surface_texture_rgba8(&r.ctx, w, h);
    let config = LaunchConfig {
        grid_dim: ((w as u32).div_ceil(16), (h as u32).div_ceil(16), 1),
        block_dim: (16, 16, 1),
        shared_mem_bytes: 0,
    };
    let (wi, hi) = (w as i32, h as i32);
    for (seed, through_object) in [(21u32, false), (22u32, true)] {
        let mapped = image.map(&r.stream).unwrap();
        let surface = mapped.surface().unwrap();
        let array = mapped.array(0, 0).unwrap();
        let object = mapped.create_surface(&array).unwrap();
        let mut launch = r.stream.launch_builder(&fill);
        if through_object {
            launch.arg(&object);
        } else {
            launch.arg(&surface);
        }
        launch.arg(&wi).arg(&hi).arg(&seed);
        // SAFETY: surface_fill_rgba8(cudaSurfaceObject_t, int, int, unsigned) writes w x h
        // texels of the mapped texture; it runs on the map's stream, before the unmap.
        unsafe { launch.launch(config) }.unwrap();
        drop(object);
        mapped.unmap().unwrap();
        assert_eq!(
            gpu::read_texture_rgba8(texture, w, h, 0),
            pattern_words(w * h, seed),
            "seed {seed}, through the {}",
            if through_object {
                "surface object"
            } else {
                "surface handle"
            }
        );
    }
    r.cu.check_err().unwrap();
    drop_and_delete_texture(&r, image, texture);
}

/// A cudarc slice shows on a display target in one call (`show_cudarc`), in both modes: the
/// texture then holds its texels, and a slice of another size resizes the target.
#[test]
fn a_cudarc_slice_shows_on_a_display_target() {
    use cuda_gl::display::{Format, Layout, Mode};
    let Some(r) = rig() else { return };
    for mode in [Mode::Interop, Mode::Staged] {
        let (mut target, _) = gpu::display_target(&r.ctx, (8, 8), Some(mode));
        for (w, h, seed) in [(33u32, 17u32, 4u32), (64, 9, 5)] {
            let words = pattern_words((w * h) as usize, seed);
            let slice = r.stream.clone_htod(&words).unwrap();
            target
                .show_cudarc(
                    &slice,
                    Layout::new((w, h), w as usize * 4, Format::Rgba8).unwrap(),
                    &r.stream,
                )
                .unwrap();
            let texels = gpu::read_texture_rgba8(target.texture().0, w as usize, h as usize, 0);
            assert_eq!(texels, words, "{mode} {w}x{h}");
        }
        drop(target);
    }
    let _ = r.cu.check_err();
    r.ctx.check_drop_errors().unwrap();
}
