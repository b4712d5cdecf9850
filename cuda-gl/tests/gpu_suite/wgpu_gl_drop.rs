//! What a `WgpuTarget` over the program's GL context (wgpu's GL backend, from
//! `open_gl_adapter`) does where that context is not current, now that the target is `Send`:
//! a read-back is refused before wgpu's copy (in staged mode there too), and so are a staged
//! target's frame and resize; a GL-route target that holds the last clones of
//! its device and queue, dropped on another thread, leaks them with its texture (wgpu-core's
//! queue drop would call GL there). (A staged target on such a device dropped with another
//! context current: `wgpu_gl`'s drop test, in both modes.)
//!
//! Needs `--features wgpu-gl`, a GPU and NVIDIA's EGL; skips with the reason elsewhere (fails
//! under `CUDA_GL_REQUIRE_GPU=1`).
#![cfg(all(feature = "wgpu-gl", feature = "egl"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::wgpu_display::{fill_frame, target};
use super::wgpu_gl::{assert_refused_without_the_gl_context, gl, gl_setup};
use super::wgpu_gl_planes::gl_name;
use super::wgpu_interop::{assert_frame, words};
use crate::gpu::gl_is;
use cuda_gl::display::{Format, Layout, Mode};
use cuda_gl::wgpu_interop::{WgpuTarget, open_gl_adapter, open_gl_device};

/// A read-back with another GL context current, or none, is refused before wgpu's copy (which
/// would run in that context), and works once the target's context is current again: in
/// interop mode (the GL route) and in staged mode on the same device (over the program's
/// context, which the staged target checks too).
#[test]
fn a_read_back_without_the_targets_gl_context_is_refused_before_wgpu() {
    let Some(s) = gl_setup() else { return };
    for mode in [Mode::Interop, Mode::Staged] {
        let mut t = target(&s, (320, 181), Format::Rgba8, mode);
        fill_frame(&s, &mut t, 7).present().unwrap();
        let what = format!("a read-back in {mode}");
        assert_refused_without_the_gl_context(gl(&s), &what, || t.read_pixels());
        let got: Vec<u32> = words(&t.read_pixels().unwrap()).collect();
        assert_frame(&got, 7, format!("{what} once the context came back"));
        drop(t);
    }
    s.ctx.check_drop_errors().unwrap();
}

/// A staged target over the program's GL context (a device of wgpu's GL backend from
/// `open_gl_adapter`): a frame (whose present is wgpu's `write_texture`) and a resize with
/// another GL context current, or none, are refused before any wgpu call; the target keeps its
/// size, and both work once the context is current again.
#[test]
fn a_staged_targets_frame_and_resize_without_the_programs_gl_context_are_refused() {
    let Some(s) = gl_setup() else { return };
    let mut t = target(&s, (320, 181), Format::Rgba8, Mode::Staged);
    assert_eq!(t.mode(), Mode::Staged);
    assert_refused_without_the_gl_context(gl(&s), "a staged frame", || {
        t.frame(&s.stream).map(drop)
    });
    assert_refused_without_the_gl_context(gl(&s), "a staged resize", || t.resize(200, 99));
    assert_eq!(t.size(), (320, 181), "the size after the refused resize");
    t.resize(200, 99).unwrap();
    fill_frame(&s, &mut t, 9).present().unwrap();
    let got: Vec<u32> = words(&t.read_pixels().unwrap()).collect();
    assert_frame(&got, 9, "a staged frame once the context came back");
    drop(t);
    s.ctx.check_drop_errors().unwrap();
}

/// A GL-route target holding the last clones of its device and queue (the application dropped
/// its own first), dropped on another thread where no GL context is current: the drop returns,
/// and the target's texture is still there in its own context (leaked with the queue, rather
/// than deleted, with whatever wgpu-core's queue drop would retire, through no context).
#[test]
fn a_gl_route_target_holding_the_last_queue_dropped_on_another_thread_leaks_it() {
    let Some(s) = gl_setup() else { return };
    let own_gl = gl(&s);
    gl::load_with(|name| own_gl.get_proc_address(name));
    // SAFETY: `own_gl` is current on this thread, which makes and uses these wgpu objects; the
    // target's drop on the other thread is what this test checks makes no wgpu call there (the
    // GL route leaks its wgpu objects where its context is not current); the adapter is
    // dropped here, before the set-up's context.
    let adapter = unsafe { open_gl_adapter(&s.instance, &s.ctx) }.unwrap();
    let (device, queue) = open_gl_device(&adapter, &s.ctx, &Default::default()).unwrap();
    let layout = Layout::packed((320, 181), Format::Rgba8).unwrap();
    let (mut t, _) = WgpuTarget::new(&s.ctx, &device, &queue, layout, Some(Mode::Interop)).unwrap();
    fill_frame(&s, &mut t, 3).present().unwrap();
    let name = gl_name(t.texture());
    drop((queue, device));
    std::thread::spawn(move || drop(t)).join().unwrap();
    assert!(gl_is(gl::IsTexture, name), "texture {name} was deleted");
    println!("drop errors: {:?}", s.ctx.take_drop_errors());
    drop(adapter);
}
