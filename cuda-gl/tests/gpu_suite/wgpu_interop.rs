//! CUDA frames into a `wgpu::Texture` on wgpu's Vulkan backend (`cuda_gl::wgpu_interop`): a test
//! kernel writes every texel through the shared texture, wgpu copies the texture into a buffer
//! after waiting for the semaphore on the GPU, and every pixel is compared with the CPU's
//! reference; frame after frame (the semaphore's value grows), at odd sizes; bad sizes and a
//! device opened without the extensions are typed errors; drops in every order.
//!
//! Needs `--features wgpu,egl` (the shared GPU helpers live under `egl`), a GPU and NVIDIA's
//! Vulkan driver (headless: `VK_DRIVER_FILES=.../nvidia_icd.json`); skips with the reason
//! elsewhere (fails under `CUDA_GL_REQUIRE_GPU=1`).
#![cfg(all(feature = "wgpu", feature = "egl"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::gpu::{Busy, assert_gave_up_in_drop, pattern, skip, stream_and_kernels};
use crate::harness::ready;
use crate::wgpu_read::read_texture;
use crate::wgpu_texture::texture_2d;
use cuda_gl::display::Mode;
use cuda_gl::wgpu_interop::{
    CudaWrite, SharedFormat, SharedTexture, WgpuError, check_adapter, check_device, find_adapter,
    open_device,
};
use cuda_gl::{Context, Device, Error, ErrorKind, LaunchConfig, Module, Stream, UsageError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What each test needs: the CUDA side, and a wgpu device on the same GPU. Field order is drop
/// order: the wgpu objects go while the GL context of a device on wgpu's GL backend is still
/// current.
pub(crate) struct Setup {
    pub(crate) instance: wgpu::Instance,
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    pub(crate) kernels: Module,
    pub(crate) stream: Stream,
    pub(crate) ctx: Arc<Context>,
    /// The GL context that a device on wgpu's GL backend runs on (`wgpu_gl::gl_setup`),
    /// current on the test's thread from the set-up to its drop; `None` on Vulkan.
    #[cfg_attr(not(feature = "wgpu-gl"), allow(dead_code))]
    pub(crate) gl: Option<cuda_gl::egl::HeadlessContext>,
}

/// `CUDA_GL_VK_VALIDATION=1` (set by `ci/gpu/vkval-env.sh`, with Khronos' validation layer
/// on the loader's path): the instance runs under the validation layer, whose messages wgpu
/// logs; a test whose set-up saw a validation error fails when the set-up is dropped. The
/// Vulkan spec's rules on layouts, queue-family ownership and semaphores are then checked by
/// the layer, not only by the texels a test reads back.
fn validating() -> bool {
    std::env::var("CUDA_GL_VK_VALIDATION").is_ok_and(|v| v == "1")
}

fn vulkan_instance() -> wgpu::Instance {
    let flags = if validating() {
        crate::harness::capture_log();
        wgpu::InstanceFlags::VALIDATION | wgpu::InstanceFlags::DEBUG
    } else {
        wgpu::InstanceFlags::empty()
    };
    wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::VULKAN,
        flags,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    })
}

impl Drop for Setup {
    fn drop(&mut self) {
        // Test code: a test that saw a validation error fails here (not while it is already
        // failing, which would abort the process instead).
        if !validating() || std::thread::panicking() {
            return;
        }
        let _ = self.device.poll(wgpu::PollType::wait_indefinitely());
        let errors: Vec<String> = crate::harness::take_log()
            .into_iter()
            .filter(|l| l.starts_with("ERROR") && l.contains("VUID"))
            .collect();
        assert!(
            errors.is_empty(),
            "{} Vulkan validation errors, the first: {}",
            errors.len(),
            errors.first().map_or("", String::as_str)
        );
    }
}

pub(crate) fn setup() -> Option<Setup> {
    let device = match Device::get(0) {
        Ok(d) => d,
        Err(e) => return skip(format!("no CUDA device: {e}")),
    };
    let ctx = Context::new(&device).expect("retain the primary context");
    let instance = vulkan_instance();
    let adapter = match find_adapter(&instance, &ctx) {
        Ok(adapter) => adapter,
        Err(e) if e.is_unsupported_setup() => {
            return skip(format!("no wgpu Vulkan adapter on the CUDA GPU: {e}"));
        }
        Err(e) => panic!("find_adapter failed: {e}"),
    };
    let (device, queue) = open_device(&adapter, &ctx, &Default::default())
        .unwrap_or_else(|e| panic!("open_device failed: {e}"));
    Some(Setup::new(ctx, instance, (device, queue), None))
}

impl Setup {
    /// The set-up of `device` and `queue` (held by `instance`), a stream and the test kernels
    /// of `ctx`, and `gl`, the GL context of a device on wgpu's GL backend.
    pub(crate) fn new(
        ctx: Arc<Context>,
        instance: wgpu::Instance,
        (device, queue): (wgpu::Device, wgpu::Queue),
        gl: Option<cuda_gl::egl::HeadlessContext>,
    ) -> Setup {
        let (stream, kernels) = stream_and_kernels(&ctx);
        Setup {
            instance,
            device,
            queue,
            kernels,
            stream,
            ctx,
            gl,
        }
    }
}

/// Runs `test` on each of `setups` in interop mode, then in staged mode, then checks that no
/// drop reported an error (nothing, with the reason, where there is no set-up).
pub(crate) fn in_both_modes_on(
    setups: impl IntoIterator<Item = Setup>,
    test: impl Fn(&Setup, Mode),
) {
    for s in setups {
        println!("-- wgpu {:?} --", s.device.adapter_info().backend);
        for mode in [Mode::Interop, Mode::Staged] {
            test(&s, mode);
        }
        s.ctx.check_drop_errors().unwrap();
    }
}

/// On the set-up that `setup` makes (none, with the reason, where it cannot), `make` makes
/// something whose drop waits for the context while a kernel spinning past the wait limit that
/// `make` starts on the `Busy` it is given runs: asserts that the drop gives up after the wait
/// limit, and, once the kernel has ended, that the drop recorded its timeouts, those of
/// `waited_with`.
pub(crate) fn assert_drop_gives_up_behind<T>(
    setup: fn() -> Option<Setup>,
    make: fn(&Setup, &Busy) -> T,
    waited_with: &[&str],
) {
    let Some(s) = setup() else { return };
    let busy = Busy::new(&s.ctx);
    let doomed = make(&s, &busy);
    busy.assert_drop_gives_up("the drop", doomed);
    busy.wait();
    assert_gave_up_in_drop(&s.ctx, waited_with);
}

/// The seed of frame `f` (every frame differs from the last in every texel).
pub(crate) fn seed_of(f: u32) -> u32 {
    f.wrapping_add(1).wrapping_mul(0x9E37_79B9)
}

/// One frame: `surface_fill_rgba8` writes every texel of `shared` with `seed` through the
/// hand-off (no CPU wait).
pub(crate) fn write_frame(s: &Setup, shared: &mut SharedTexture, seed: u32) {
    // SAFETY: (1): no submit uses the texture until `finish` (the tests submit after it).
    unsafe { filled_write(s, shared, seed) }.finish().unwrap();
}

/// `shared` written by CUDA on the suite's stream, `surface_fill_rgba8` queued to write every
/// texel with `seed`; the guard, for the caller to end.
///
/// # Safety
/// 1. As `SharedTexture::write`'s (1), for the guard returned.
pub(crate) unsafe fn filled_write<'a>(
    s: &'a Setup,
    shared: &'a mut SharedTexture,
    seed: u32,
) -> CudaWrite<'a, Stream> {
    let fill = s.kernels.function("surface_fill_rgba8").unwrap();
    let (w, h) = shared.size();
    // SAFETY: (1).
    let write = unsafe { shared.write(&s.stream) }.unwrap();
    // SAFETY: the kernel writes w x h RGBA8 texels through the surface, on the guard's stream.
    unsafe {
        fill.launch(
            LaunchConfig::for_image(w, h),
            &s.stream,
            (write.surface(), w as i32, h as i32, seed),
        )
        .unwrap();
    }
    write
}

/// wgpu copies `texture` (4 bytes per texel) into a buffer, maps it and returns its texels, row by row.
pub(crate) fn read_back(s: &Setup, texture: &wgpu::Texture) -> Vec<u32> {
    words(&read_texture(&s.device, &s.queue, texture)).collect()
}

/// `bytes` as little-endian 32-bit words: RGBA8 texels as the test kernels' pattern gives them.
pub(crate) fn words(bytes: &[u8]) -> impl Iterator<Item = u32> + '_ {
    bytes
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Texels that differ from the CPU reference of `seed`, and the first of them.
fn mismatches(got: &[u32], seed: u32) -> (usize, Option<(usize, u32, u32)>) {
    let mut first = None;
    let n = got
        .iter()
        .enumerate()
        .filter(|&(i, &word)| {
            let want = pattern(i as u32, seed);
            if word != want && first.is_none() {
                first = Some((i, word, want));
            }
            word != want
        })
        .count();
    (n, first)
}

/// Asserts that `got` is the CPU reference of `seed` in every texel; `what` names the frame.
pub(crate) fn assert_frame(got: &[u32], seed: u32, what: impl std::fmt::Display) {
    let (bad, first) = mismatches(got, seed);
    assert_eq!(bad, 0, "{what}: {bad} texels differ, first {first:x?}");
}

/// Writes frame `seed` into `shared` ([`write_frame`]), reads the texture back through wgpu and
/// asserts that every texel is the CPU's.
pub(crate) fn write_and_check(
    s: &Setup,
    shared: &mut SharedTexture,
    seed: u32,
    what: impl std::fmt::Display,
) {
    write_frame(s, shared, seed);
    assert_frame(&read_back(s, shared.texture()), seed, what);
}

impl Setup {
    /// A shared texture of `size` and `format` on the set-up's device.
    pub(crate) fn shared(&self, size: (u32, u32), format: SharedFormat) -> SharedTexture {
        SharedTexture::new(&self.ctx, &self.device, &self.queue, size, format).unwrap()
    }

    /// An RGBA8 shared texture of `size` holding frame `seed`, written ([`write_frame`]).
    pub(crate) fn written(&self, size: (u32, u32), seed: u32) -> SharedTexture {
        let mut shared = self.shared(size, SharedFormat::Rgba8Unorm);
        write_frame(self, &mut shared, seed);
        shared
    }
}

#[test]
fn every_texel_of_every_frame_reaches_wgpu() {
    let Some(s) = setup() else { return };
    for size in [(1001, 333), (77, 1201), (1920, 1080)] {
        let mut shared = s.shared(size, SharedFormat::Rgba8Unorm);
        let start = Instant::now();
        for f in 0..6u32 {
            write_frame(&s, &mut shared, seed_of(f));
            assert_eq!(shared.timeline_value(), 2 * u64::from(f + 1));
            let got = read_back(&s, shared.texture());
            assert_frame(&got, seed_of(f), format!("{size:?} frame {f}"));
        }
        println!(
            "{size:?}: 6 frames written, copied and checked in {:?}",
            start.elapsed()
        );
    }
    s.ctx.check_drop_errors().unwrap();
}

/// How long the slow kernel spins before writing: far longer than wgpu needs to copy the
/// texture, so a copy that wgpu did not order after it sees the previous frame.
const SLOW_NS: u64 = 30_000_000;

#[test]
fn wgpu_waits_for_a_slow_kernel_on_the_gpu_and_the_cpu_does_not() {
    let Some(s) = setup() else { return };
    let (w, h) = (320u32, 180u32);
    let mut shared = s.written((w, h), seed_of(0));
    assert_frame(
        &read_back(&s, shared.texture()),
        seed_of(0),
        "the first frame",
    );
    let slow = s.kernels.function("surface_fill_rgba8_slow").unwrap();
    for f in 1..4u32 {
        let start = Instant::now();
        // SAFETY: no submit uses the texture until `finish`.
        let write = unsafe { shared.write(&s.stream) }.unwrap();
        // SAFETY: the kernel writes w x h RGBA8 texels through the surface, on the guard's
        // stream; the grid (320 x 180 texels) fits on the GPU at once.
        unsafe {
            slow.launch(
                LaunchConfig::for_image(w, h),
                &s.stream,
                (write.surface(), w as i32, h as i32, seed_of(f), SLOW_NS),
            )
            .unwrap();
        }
        write.finish().unwrap();
        let handed = start.elapsed();
        // wgpu's copy is submitted at once; only the GPU holds it back until the kernel is done.
        let got = read_back(&s, shared.texture());
        let read = start.elapsed();
        println!("slow frame {f}: hand-off {handed:?} on the CPU, read back after {read:?}");
        assert!(
            handed < Duration::from_nanos(SLOW_NS / 2),
            "write + finish waited for the kernel on the CPU ({handed:?})"
        );
        assert!(
            read >= Duration::from_nanos(SLOW_NS),
            "the copy finished before the kernel could have ({read:?})"
        );
        assert_frame(&got, seed_of(f), format!("slow frame {f}"));
    }
}

#[test]
fn a_four_byte_float_texture_carries_the_kernels_bits() {
    let Some(s) = setup() else { return };
    // R32Float has 4 bytes per texel, as RGBA8: the RGBA8 kernel writes its bit patterns, and
    // wgpu's copy (a byte copy) returns them unchanged.
    let mut shared = s.shared((257, 129), SharedFormat::R32Float);
    for f in 0..3u32 {
        write_and_check(&s, &mut shared, seed_of(f), format!("R32Float frame {f}"));
    }
}

#[test]
fn frames_queued_back_to_back_end_with_the_last() {
    let Some(s) = setup() else { return };
    let mut shared = s.shared((640, 360), SharedFormat::Rgba8Unorm);
    // 100 frames with no read and no CPU wait between them: each write waits for wgpu's
    // hand-off, each hand-off for CUDA's signal, all on the GPU.
    let start = Instant::now();
    for f in 0..100u32 {
        write_frame(&s, &mut shared, seed_of(f));
    }
    let queued = start.elapsed();
    let got = read_back(&s, shared.texture());
    println!(
        "100 frames of 640x360 queued in {queued:?} ({:?} per frame, CPU side), read back after {:?}",
        queued / 100,
        start.elapsed()
    );
    assert_frame(&got, seed_of(99), "the last of 100 frames");
    assert_eq!(shared.timeline_value(), 200);
}

#[test]
fn a_1080p_stream_of_frames_each_used_by_wgpu() {
    let Some(s) = setup() else { return };
    let (w, h) = (1920u32, 1080u32);
    let mut shared = s.shared((w, h), SharedFormat::Rgba8Unorm);
    // wgpu's use of each frame: a copy into a texture of its own, as a pass sampling it would.
    let copy = texture_2d(
        &s.device,
        (w, h),
        wgpu::TextureFormat::Rgba8Unorm,
        wgpu::TextureUsages::COPY_DST | wgpu::TextureUsages::COPY_SRC,
        "frame copy",
    );
    const FRAMES: u32 = 240;
    let mut run = |first: u32| {
        let start = Instant::now();
        for f in first..first + FRAMES {
            write_frame(&s, &mut shared, seed_of(f));
            let mut encoder = s.device.create_command_encoder(&Default::default());
            encoder.copy_texture_to_texture(
                shared.texture().as_image_copy(),
                copy.as_image_copy(),
                shared.texture().size(),
            );
            s.queue.submit([encoder.finish()]);
        }
        let queued = start.elapsed();
        s.device
            .poll(wgpu::PollType::wait_indefinitely())
            .expect("wgpu finishes");
        let done = start.elapsed();
        println!(
            "1920x1080: {FRAMES} frames (kernel, hand-off, wgpu copy) in {done:?}: {:.0} us per \
             frame ({:.0} us per frame queued on the CPU)",
            done.as_secs_f64() * 1e6 / f64::from(FRAMES),
            queued.as_secs_f64() * 1e6 / f64::from(FRAMES),
        );
    };
    run(0); // warm-up
    run(FRAMES);
    let got = read_back(&s, &copy);
    assert_frame(&got, seed_of(2 * FRAMES - 1), "the last 1080p frame");
}

#[test]
fn a_leaked_write_is_recovered_by_the_next() {
    let Some(s) = setup() else { return };
    let mut shared = s.shared((129, 65), SharedFormat::Rgba8Unorm);
    // SAFETY: no submit uses the texture until the next write recovers it.
    let leaked = unsafe { shared.write(&s.stream) }.unwrap();
    std::mem::forget(leaked);
    write_and_check(
        &s,
        &mut shared,
        seed_of(7),
        "the frame after a leaked write",
    );
    s.ctx.check_drop_errors().unwrap();
}

#[test]
fn drops_in_any_order_are_safe() {
    let Some(s) = setup() else { return };
    // The application drops its device and queue first; the texture keeps what it needs.
    let (device, queue) = (s.device.clone(), s.queue.clone());
    let mut shared = SharedTexture::new(
        &s.ctx,
        &device,
        &queue,
        (300, 200),
        SharedFormat::Rgba8Unorm,
    )
    .unwrap();
    drop((device, queue));
    write_frame(&s, &mut shared, seed_of(1));
    // A clone of the wgpu texture outlives the SharedTexture, and still reads the last frame.
    let texture = shared.texture().clone();
    drop(shared);
    let got = read_back(&s, &texture);
    assert_frame(&got, seed_of(1), "the frame read through a clone");
    drop(texture);
    s.device
        .poll(wgpu::PollType::wait_indefinitely())
        .expect("wgpu finishes");
    // Every format can be made and dropped unused.
    for format in SharedFormat::ALL {
        match SharedTexture::new(&s.ctx, &s.device, &s.queue, (33, 17), format) {
            Ok(t) => drop(t),
            Err(Error::Wgpu(WgpuError::NotExportable { .. })) => {
                println!("{format:?}: not exportable on this driver")
            }
            // R16Unorm and Rg16Unorm on an adapter without 16-bit normalized textures (which
            // `open_device` asks for wherever the adapter offers them).
            Err(Error::Wgpu(WgpuError::MissingFeature { .. }))
                if !s.device.features().contains(format.required_features()) =>
            {
                println!(
                    "{format:?}: the adapter offers no {:?}",
                    format.required_features()
                )
            }
            Err(e) => panic!("{format:?}: {e}"),
        }
    }
    s.device
        .poll(wgpu::PollType::wait_indefinitely())
        .expect("wgpu finishes");
    s.ctx.check_drop_errors().unwrap();
}

#[test]
fn bad_sizes_are_typed_errors() {
    let Some(s) = setup() else { return };
    let new =
        |size| SharedTexture::new(&s.ctx, &s.device, &s.queue, size, SharedFormat::Rgba8Unorm);
    let zero = |e: Error| matches!(e, Error::Usage(UsageError::ZeroSize { .. }));
    assert!(zero(new((0, 10)).unwrap_err()));
    assert!(zero(new((10, 0)).unwrap_err()));
    let max = s.device.limits().max_texture_dimension_2d;
    let e = new((max + 1, 1)).unwrap_err();
    assert!(
        matches!(e, Error::Usage(UsageError::TooLarge { .. })),
        "{e}"
    );
    assert_eq!(e.kind(), ErrorKind::Usage, "{e}");
}

/// Adapter first, then device, as in wgpu: the device asks for the adapter's own limits (its
/// largest texture, over wgpu's default 8192 on NVIDIA), and a shared texture of that width is
/// made on it; one texel wider is refused by name.
#[test]
fn a_device_opened_with_the_adapters_limits_has_them() {
    let Some(s) = setup() else { return };
    let adapter = find_adapter(&s.instance, &s.ctx).expect("the adapter the set-up found");
    let desc = wgpu::DeviceDescriptor {
        required_limits: adapter.limits(),
        ..Default::default()
    };
    let (device, queue) = open_device(&adapter, &s.ctx, &desc).unwrap();
    let max = adapter.limits().max_texture_dimension_2d;
    assert_eq!(device.limits().max_texture_dimension_2d, max);
    println!("max_texture_dimension_2d: {max} (wgpu's default: 8192)");
    let new = |w| SharedTexture::new(&s.ctx, &device, &queue, (w, 4), SharedFormat::R8Unorm);
    // The driver's export limit may be below wgpu's: then that is the refusal, by name.
    match new(max) {
        Ok(_) | Err(Error::Wgpu(WgpuError::ExportTooLarge { .. })) => {}
        Err(e) => panic!("a texture of the adapter's width: {e}"),
    }
    let e = new(max + 1).unwrap_err();
    assert!(
        matches!(e, Error::Usage(UsageError::TooLarge { .. })),
        "{e}"
    );
    s.ctx.check_drop_errors().unwrap();
}

#[test]
fn a_device_without_the_extensions_or_another_gpu_is_refused() {
    let Some(s) = setup() else { return };
    // A device opened the usual way (Adapter::request_device) lacks the external-memory and
    // external-semaphore extensions: refused by name, with the fix.
    let adapters = ready(s.instance.enumerate_adapters(wgpu::Backends::VULKAN));
    let mut others = 0;
    for adapter in adapters {
        match check_adapter(&adapter, &s.ctx) {
            Ok(()) => {
                let (device, queue) = ready(adapter.request_device(&Default::default())).unwrap();
                let e = check_device(&device, &s.ctx).unwrap_err();
                let text = e.to_string();
                assert_eq!(e.kind(), ErrorKind::Wgpu);
                assert!(
                    text.contains("(not enabled)") && text.contains("help:"),
                    "{text}"
                );
                let e =
                    SharedTexture::new(&s.ctx, &device, &queue, (8, 8), SharedFormat::Rgba8Unorm)
                        .unwrap_err();
                assert!(matches!(e, Error::Wgpu(WgpuError::Missing { .. })), "{e}");
            }
            // Another GPU, or Mesa's lavapipe beside NVIDIA's driver.
            Err(Error::Wgpu(WgpuError::OtherGpu { vulkan, .. })) => {
                others += 1;
                println!("refused as another GPU: {vulkan}");
                // Given that adapter, `open_device` refuses it before it opens anything.
                let e = open_device(&adapter, &s.ctx, &Default::default()).unwrap_err();
                assert!(
                    matches!(e, Error::Wgpu(WgpuError::OtherGpu { call, .. })
                        if call == "cuda_gl::wgpu_interop::open_device"),
                    "{e}"
                );
            }
            Err(e) => panic!("unexpected refusal: {e}"),
        }
    }
    println!("{others} adapter(s) of other GPUs seen and refused");
}

/// The application destroys (a clone of) the texture while CUDA holds it: the hand-back is
/// refused with a typed error, and the refused acquire's semaphore wait is not left pending in
/// wgpu-hal, where the application's next submit would carry it after the texture and its
/// semaphore are gone (invalid Vulkan usage): that submit and its wait complete.
#[test]
fn a_hand_back_refused_after_the_texture_was_destroyed_leaves_no_wait_pending() {
    let Some(s) = setup() else { return };
    let mut shared = s.written((64, 32), seed_of(1));
    let clone = shared.texture().clone();
    // SAFETY: no wgpu command uses the texture while CUDA holds it (it is destroyed instead).
    let write = unsafe { shared.write(&s.stream) }.unwrap();
    clone.destroy();
    let e = write.finish().unwrap_err();
    println!("finish after destroy: {e}");
    assert!(matches!(e, Error::Wgpu(WgpuError::Refused { .. })), "{e}");
    drop(shared);
    drop(clone);
    let errors = s.ctx.check_drop_errors();
    println!("drop errors (the recovery's acquire is refused too): {errors:?}");
    // The application's next submits, on the same queue: nothing of the shared texture's.
    for _ in 0..3 {
        let index = s.queue.submit([]);
        s.device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(index),
                timeout: Some(Duration::from_secs(5)),
            })
            .expect("the application's empty submit completes");
    }
}
