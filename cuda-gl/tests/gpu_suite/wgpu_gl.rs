//! The GL route of `cuda_gl::wgpu_interop` (feature `wgpu-gl`): a wgpu device on wgpu's GL backend
//! over a headless GL context on the CUDA GPU (`open_gl_adapter`, `open_gl_device`), on which a
//! `WgpuTarget` in interop mode draws frames in place into a GL texture that CUDA registered.
//! `wgpu_display` runs every target test (shows of every format at odd sizes, surface frames, exact
//! texels, colour maps, resizes and their memory, video, a destroyed texture) on this set-up too
//! (`gl_setup`); here: what only the GL route has. Auto chooses it and says so; a call with another
//! GL context current, or none, is refused and works again once it is current; a forgotten frame is
//! recovered, waiting for the context at most the wait limit; pixel and surface frames on two
//! streams come out in order; a destroyed device refuses presents and the target still drops
//! cleanly; a target dropped without its GL context leaks its texture; a device on wgpu's own GL
//! context falls back to staged with the reason.
//!
//! Needs `--features wgpu-gl` (which brings `wgpu` and `egl`), a GPU and NVIDIA's EGL (a
//! headless context on the CUDA device); skips with the reason elsewhere (fails under
//! `CUDA_GL_REQUIRE_GPU=1`).
#![cfg(all(feature = "wgpu-gl", feature = "egl"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::wgpu_display::{Draw, draw_frame_on, fill_frame, target};
use super::wgpu_gl_planes::gl_name;
use super::wgpu_interop::{Setup, assert_drop_gives_up_behind, assert_frame, words};
use crate::gpu::{Busy, device_and_gl, gl_is, skip};
use cuda_gl::display::{Format, Layout, Mode};
use cuda_gl::egl::HeadlessContext;
use cuda_gl::wgpu_interop::{
    WgpuError, WgpuTarget, check_gl_device, open_gl_adapter, open_gl_device,
};
use cuda_gl::{Context, Error, Stream, StreamFlags};

/// A set-up on wgpu's GL backend: a headless GL context on CUDA device 0, current on this
/// thread until the set-up drops (after its wgpu objects), and a device opened over it.
pub(crate) fn gl_setup() -> Option<Setup> {
    gl_setup_with(wgpu::Features::empty())
}

/// [`gl_setup`] with a device opened with `features` (`TEXTURE_FORMAT_16BIT_NORM` for P010
/// video planes: every desktop GL from 3.0 has it, and cuda-gl's headless context is 4.5).
pub(crate) fn gl_setup_with(features: wgpu::Features) -> Option<Setup> {
    let (device, gl) = device_and_gl(0)?;
    let ctx = Context::new(&device).expect("retain the primary context");
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::empty(),
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    let desc = wgpu::DeviceDescriptor {
        required_features: features,
        ..Default::default()
    };
    // SAFETY: `gl` is current on this thread, the test's, which alone uses the set-up; it is
    // dropped after the wgpu objects (`Setup`'s field order), and the tests that make another
    // context current (or none) make no wgpu call until `gl` is current again.
    let adapter = match unsafe { open_gl_adapter(&instance, &ctx) } {
        Ok(adapter) => adapter,
        Err(e) if e.is_unsupported_setup() => {
            return skip(format!("no wgpu GL adapter on the CUDA GPU: {e}"));
        }
        Err(e) => panic!("open_gl_adapter failed: {e}"),
    };
    let (device, queue) = open_gl_device(&adapter, &ctx, &desc)
        .unwrap_or_else(|e| panic!("open_gl_device failed: {e}"));
    println!("GL: {} ({})", gl.renderer(), gl.version());
    Some(Setup::new(ctx, instance, (device, queue), Some(gl)))
}

/// The set-up's GL context.
pub(crate) fn gl(s: &Setup) -> &HeadlessContext {
    s.gl.as_ref().expect("a set-up on wgpu's GL backend")
}

/// Asserts that `call` (named `what`) is refused with `Error::WrongGlContext` while another
/// context of `gl`'s share group is current, and with `Error::NoGlContext` while none is; then
/// makes `gl` current again.
pub(crate) fn assert_refused_without_the_gl_context<T: std::fmt::Debug>(
    gl: &HeadlessContext,
    what: &str,
    mut call: impl FnMut() -> cuda_gl::Result<T>,
) {
    // Another context of the same share group current: the registration's owner is not.
    let other = gl.new_shared().unwrap();
    let e = call().unwrap_err();
    println!("{what}, another context current: {e}");
    assert!(matches!(e, Error::WrongGlContext { .. }), "{e}");
    other.release_current().unwrap();
    let e = call().unwrap_err();
    println!("{what}, no context current: {e}");
    assert!(matches!(e, Error::NoGlContext { .. }), "{e}");
    drop(other);
    gl.make_current().unwrap();
}

/// Asserts that `t`'s texture, read back by the target, is the frame of `seed`.
fn assert_shows(t: &mut WgpuTarget, seed: u32, what: impl std::fmt::Display) {
    let got: Vec<u32> = words(&t.read_pixels().unwrap()).collect();
    assert_frame(&got, seed, what);
}

/// Runs `test` on a target of `size` (RGBA8) in interop mode on the GL route (nothing, with
/// the reason, where there is no set-up), then drops the target and checks that no drop
/// reported an error.
fn on_interop_target(size: (u32, u32), test: impl FnOnce(&Setup, &mut WgpuTarget)) {
    let Some(s) = gl_setup() else { return };
    let mut t = target(&s, size, Format::Rgba8, Mode::Interop);
    test(&s, &mut t);
    drop(t);
    s.ctx.check_drop_errors().unwrap();
}

#[test]
fn auto_chooses_the_gl_route_on_the_cuda_gpus_gl_context_and_says_so() {
    let Some(s) = gl_setup() else { return };
    check_gl_device(&s.device, &s.ctx).unwrap();
    let layout = Layout::packed((641, 359), Format::Rgba8).unwrap();
    let (mut t, report) = WgpuTarget::new(&s.ctx, &s.device, &s.queue, layout, None).unwrap();
    let line = report.to_string();
    println!("{line}");
    assert_eq!(t.mode(), Mode::Interop, "{line}");
    assert!(line.starts_with("display: interop; wgpu GL: "), "{line}");
    for seed in [3u32, 4] {
        fill_frame(&s, &mut t, seed).present().unwrap();
        assert_shows(&mut t, seed, format!("GL frame {seed}"));
    }
    drop(t);
    s.ctx.check_drop_errors().unwrap();
}

/// A frame's map with another GL context current, or none, is refused with the error that says
/// so (no GL or wgpu call is made then), and the target works again once its context is
/// current.
#[test]
fn a_map_without_the_targets_gl_context_is_refused_and_works_once_it_is_current() {
    on_interop_target((320, 181), |s, t| {
        fill_frame(s, t, 1).present().unwrap();
        assert_refused_without_the_gl_context(gl(s), "a frame's map", || {
            t.frame(&s.stream).unwrap().surface().map(drop)
        });
        fill_frame(s, t, 2).present().unwrap();
        assert_shows(t, 2, "the frame after the context came back");
    });
}

/// A target dropped with another GL context current (of the same share group, where a deletion
/// would show; the target is `Send`, and a drop on another thread is this case) leaks its
/// texture rather than have wgpu delete it there; dropped with its own context current, wgpu
/// deletes it, and nothing is reported. In interop mode (the GL route) and in staged mode on
/// the same device (over the program's context, which the staged target checks too).
#[test]
fn a_gl_route_target_dropped_without_its_gl_context_leaks_its_texture() {
    let Some(s) = gl_setup() else { return };
    let own_gl = gl(&s);
    gl::load_with(|name| own_gl.get_proc_address(name));
    for (mode, own) in both_modes_with_and_without_the_context() {
        let mut t = target(&s, (320, 181), Format::Rgba8, mode);
        fill_frame(&s, &mut t, 3).present().unwrap();
        let name = gl_name(t.texture());
        assert_drop_leaks_without_its_context(&s, t, &[name], mode, own);
    }
}

/// Interop and staged mode, each with the owning GL context current at the drop and without.
pub(crate) fn both_modes_with_and_without_the_context() -> Vec<(Mode, bool)> {
    [Mode::Interop, Mode::Staged]
        .map(|m| [(m, true), (m, false)])
        .concat()
}

/// Drops `owner` (made in `mode` on the set-up, holding GL textures `names`) with its own GL
/// context current (`own`) or another of its share group (where a deletion would show), then,
/// its own current again and wgpu's deferred deletions done, asserts that the textures were
/// deleted with their context current and leaked otherwise, and that a drop in its own context
/// recorded no error. (Without its context, cuda-gl's textures could not be unregistered:
/// leaked, and recorded.)
pub(crate) fn assert_drop_leaks_without_its_context<T>(
    s: &Setup,
    owner: T,
    names: &[u32],
    mode: Mode,
    own: bool,
) {
    let own_gl = gl(s);
    assert!(names.iter().all(|&n| gl_is(gl::IsTexture, n)), "{names:?}");
    let other = (!own).then(|| own_gl.new_shared().unwrap());
    drop(owner);
    drop(other);
    own_gl.make_current().unwrap();
    // Whatever wgpu deferred (a texture still in use by a submission, or held by the queue's
    // pending writes: a staged present's `write_texture`) goes here.
    s.queue.submit([]);
    s.device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
    let live: Vec<bool> = names.iter().map(|&n| gl_is(gl::IsTexture, n)).collect();
    assert_eq!(
        live,
        vec![!own; names.len()],
        "textures {names:?}, {mode:?}, own context current: {own}"
    );
    let errors = s.ctx.take_drop_errors();
    println!("{mode:?}, own context current: {own}; drop errors: {errors:?}");
    assert!(!own || errors.is_empty(), "{errors:?}");
}

/// A resize with another GL context current, or none, is refused before the new texture is
/// made (wgpu would make it in that context): the target keeps its size, texture and frame,
/// and the resize works once its context is current.
#[test]
fn a_resize_without_the_targets_gl_context_is_refused_before_wgpu() {
    on_interop_target((320, 181), |s, t| {
        fill_frame(s, t, 5).present().unwrap();
        let texture = t.texture().clone();
        assert_refused_without_the_gl_context(gl(s), "a resize", || t.resize(200, 99));
        assert_eq!((t.size(), t.texture() == &texture), ((320, 181), true));
        assert_shows(t, 5, "the frame before the refused resizes");
        t.resize(200, 99).unwrap();
        assert_eq!((t.size(), t.mode()), ((200, 99), Mode::Interop));
        fill_frame(s, t, 6).present().unwrap();
        assert_shows(t, 6, "the frame after the resize");
    });
}

/// A frame forgotten with `mem::forget` while its texture is mapped (its surface asked for),
/// and one forgotten after its pixels were asked for: the next frame waits for them, and
/// shows itself.
#[test]
fn a_forgotten_frame_is_recovered_by_the_next_one() {
    on_interop_target((256, 99), |s, t| {
        std::mem::forget(fill_frame(s, t, 5));
        fill_frame(s, t, 6).present().unwrap();
        assert_shows(t, 6, "the frame after a forgotten surface frame");
        std::mem::forget(draw_frame_on(s, t, &s.stream, 7, Draw::Pixels));
        fill_frame(s, t, 8).present().unwrap();
        assert_shows(t, 8, "the frame after a forgotten pixel frame");
    });
}

/// A target whose frame was forgotten with its texture mapped while an unrelated kernel spinning
/// past the wait limit runs elsewhere in the context: the target's first shown frame, the forgotten
/// one.
fn forgotten_while_busy(s: &Setup, busy: &Busy) -> WgpuTarget {
    let mut t = target(s, (129, 65), Format::Rgba8, Mode::Interop);
    fill_frame(s, &mut t, 3).present().unwrap();
    // Mapped (and drawn) before the kernel starts, as `bounded_waits` leaks its mapping: the
    // waits under test are the ones after, not whatever the map itself may wait for.
    let forgotten = fill_frame(s, &mut t, 5);
    busy.start(&s.kernels, crate::gpu::spin_past_the_limit());
    std::mem::forget(forgotten);
    t
}

/// The next frame after one forgotten while a kernel spinning past the wait limit runs elsewhere in
/// the context gives up after the wait limit with `Error::Timeout` (it waited for the whole context
/// with no limit), and once the kernel has ended, a frame shows itself.
#[test]
fn a_forgotten_frames_recovery_in_the_next_frame_gives_up_after_ten_seconds() {
    let Some(s) = gl_setup() else { return };
    let busy = Busy::new(&s.ctx);
    let mut t = forgotten_while_busy(&s, &busy);
    busy.assert_gives_up("the frame after a forgotten one", || {
        t.frame(&s.stream).map(drop)
    });
    busy.wait();
    fill_frame(&s, &mut t, 8).present().unwrap();
    assert_shows(&mut t, 8, "the frame after the recovery");
    drop(t);
    s.ctx.check_drop_errors().unwrap();
}

/// As above, in the target's drop: it gives up after the wait limit (it waited for the context with
/// no limit, twice: for the pixels, then to unregister the mapped texture), leaks what the kernel
/// may still use (the pixels, and the mapped texture with its registration), and records the
/// timeout for `check_drop_errors` (it only logged it before).
#[test]
fn a_forgotten_frames_recovery_in_the_drop_gives_up_after_ten_seconds() {
    assert_drop_gives_up_behind(gl_setup, forgotten_while_busy, &["cuCtxSynchronize"]);
}

/// Frames alternate between two streams and between pixels and surface: each shows itself in
/// every texel (a pixel frame's copy and the next frame's kernel are ordered across streams).
#[test]
fn pixel_and_surface_frames_on_two_streams_each_show_themselves() {
    on_interop_target((1001, 333), |s, t| {
        let other = Stream::new(&s.ctx, StreamFlags::NonBlocking).unwrap();
        for round in 0..6u32 {
            let seed = 100 + round;
            let stream = if round % 2 == 0 { &s.stream } else { &other };
            let draw = if round % 3 == 0 {
                Draw::Pixels
            } else {
                Draw::Surface
            };
            draw_frame_on(s, t, stream, seed, draw).present().unwrap();
            assert_shows(t, seed, format!("round {round}"));
        }
    });
}

/// The application destroys the wgpu device (safe code; wgpu then destroys every texture of
/// it): the target's GL texture stays alive while CUDA holds it (a frame is still drawn into
/// it and presented without a fault: wgpu 30 accepts submits on a destroyed device, and a
/// refusal would be a typed error), the read-back is refused, and the target drops cleanly,
/// its texture unregistered.
#[test]
fn a_destroyed_device_refuses_read_backs_and_the_target_drops_cleanly() {
    on_interop_target((64, 48), |s, t| {
        fill_frame(s, t, 1).present().unwrap();
        s.device.destroy();
        // A destroyed device's poll may report it lost: only the wait matters here.
        let _ = s.device.poll(wgpu::PollType::wait_indefinitely());
        let presented = fill_frame(s, t, 2).present();
        println!("a present on a destroyed device: {presented:?}");
        if let Err(e) = &presented {
            assert!(matches!(e, Error::Wgpu(_)), "{e}");
        }
        s.stream.synchronize().unwrap();
        let e = t.read_pixels().unwrap_err();
        println!("a read-back on a destroyed device: {e}");
        assert!(matches!(e, Error::Wgpu(WgpuError::Refused { .. })), "{e}");
    });
}

/// A device on a GL context that wgpu made itself is not one the GL route can use: auto falls
/// back to staged (which runs on any device) and the report says why.
#[test]
fn a_device_on_wgpus_own_gl_context_runs_staged_and_says_why() {
    let Some(s) = gl_setup() else { return };
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::GL,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    let adapters = crate::harness::ready(instance.enumerate_adapters(wgpu::Backends::GL));
    // wgpu's own EGL context: made current only inside wgpu's calls (which leave none current
    // here: the set-up's context is made current again before its next use).
    let Some(adapter) = adapters.into_iter().next() else {
        // Nothing of cuda-gl's to test here; a failure under CUDA_GL_REQUIRE_GPU=1 (as the
        // library's own test of such a device), once everything is dropped in order.
        gl(&s).make_current().unwrap();
        drop(s);
        drop(instance);
        let _: Option<()> = skip("wgpu's own GL instance found no adapter");
        return;
    };
    let opened = crate::harness::ready(adapter.request_device(&Default::default()));
    let (device, queue) = match opened {
        Ok(opened) => opened,
        // wgpu's GL backend on NVIDIA's EGL without a window system (the H100 host, driver
        // 580.159.04, 2026-12-07: "Parent device is lost"; also gfx-rs/wgpu#7068): there is no
        // such device to give cuda-gl, so nothing of cuda-gl's can run. Only that error: any
        // other fails the test.
        Err(e) if e.to_string().contains("device is lost") => {
            println!("not run: wgpu could not open a device on its own GL context here: {e}");
            drop(adapter);
            gl(&s).make_current().unwrap();
            drop(s);
            drop(instance);
            return;
        }
        Err(e) => panic!("a device on wgpu's own GL context: {e}"),
    };
    let layout = Layout::packed((77, 31), Format::Rgba8).unwrap();
    let (mut t, report) = WgpuTarget::new(&s.ctx, &device, &queue, layout, None).unwrap();
    let line = report.to_string();
    println!("{line}");
    assert_eq!(t.mode(), Mode::Staged, "{line}");
    assert!(
        line.starts_with("display: staged (interop refused: wgpu_own_gl_context)"),
        "{line}"
    );
    assert!(line.contains("open_gl_device"), "{line}");
    draw_frame_on(&s, &mut t, &s.stream, 9, Draw::Pixels)
        .present()
        .unwrap();
    assert_shows(&mut t, 9, "a staged frame on wgpu's own GL context");
    drop((t, device, queue, adapter));
    gl(&s).make_current().unwrap();
    s.ctx.check_drop_errors().unwrap();
    // wgpu's own GL instance goes last, after cuda-gl's context: its drop terminates its EGL
    // display, which may be the one cuda-gl's context is on (a shared display, see
    // `HeadlessContext::has_own_display`), and that context would end with it under the
    // set-up's drop.
    drop(s);
    drop(instance);
}
