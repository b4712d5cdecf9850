//! Contexts that share objects, and claims the application's own GL calls must not undo (the
//! third soundness round, issue 31), each shown on the GPU:
//! - a context of a share group that got a destroyed member's handle is not that member: its
//!   framebuffers are its own, and the dead member's registrations and targets are refused;
//! - a debug label the application gives a registered object does not let a context of its share
//!   group register it again;
//! - a registration whose unregister was refused while still mapped keeps the object claimed.
//!
//! Each test failed on the code before these checks (see `records/gpu-runs.md`). Needs
//! `--features egl` and a GPU.
#![cfg(feature = "egl")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::gpu::*;
use cuda_gl::egl::Offscreen;
use cuda_gl::{Error, RegisterFlags, RegisteredBuffer};

const BYTES: usize = 4096;

fn in_child(name: &str, body: impl FnOnce()) {
    crate::harness::in_child(module_path!(), name, body);
}

/// A framebuffer object of the current context (made by binding a generated name), unbound.
fn own_framebuffer() -> u32 {
    let mut name = 0;
    // SAFETY: a context is current; `name` is a valid out-pointer; binding a generated name makes
    // the object, and binding 0 restores the default framebuffer.
    unsafe {
        gl::GenFramebuffers(1, &mut name);
        gl::BindFramebuffer(gl::FRAMEBUFFER, name);
        gl::BindFramebuffer(gl::FRAMEBUFFER, 0);
    }
    check_gl();
    name
}

/// Context A shares with G; A makes an `Offscreen` target (a framebuffer, which is A's alone)
/// and registers a buffer; A is destroyed; B, made next to share with G, may get A's handle
/// value (NVIDIA's EGL hands it out again) and sees A's shared objects. In B, neither the
/// target nor the registration is A's: reading, binding and mapping are refused, and dropping
/// the target leaves B's framebuffer of the same name alone.
///
/// In a child process: which handle EGL hands out next depends on the process's history.
#[test]
fn a_dead_members_handle_in_its_share_group_is_not_that_member() {
    in_child(
        "a_dead_members_handle_in_its_share_group_is_not_that_member",
        dead_member,
    );
}

fn dead_member() {
    let Some(g) = gpu() else { return };
    let a = g.gl.new_shared().unwrap();
    let a_handle = egl_current_context();
    let target = Offscreen::new(8, 8).unwrap();
    let (buffer, mut registered) = registered_buffer(&g.ctx, BYTES, RegisterFlags::NONE);
    let framebuffer = target.framebuffer();
    drop(a);
    let b = g.gl.new_shared().unwrap();
    let b_handle = egl_current_context();
    print_handle_reuse(a_handle, b_handle);
    // B's own framebuffers, until one has the name of A's.
    let mut mine = Vec::new();
    while !mine.contains(&framebuffer) && mine.len() < 64 {
        mine.push(own_framebuffer());
    }
    assert!(
        target.read_rgba8().is_err(),
        "the dead context's target read framebuffer {framebuffer} of a context of its share group"
    );
    assert!(
        target.bind().is_err(),
        "the dead context's target bound framebuffer {framebuffer} of a context of its share group"
    );
    match registered.map(&g.stream) {
        Err(Error::GlContextGone { .. } | Error::WrongGlContext { .. }) => {}
        Err(e) => panic!("refused, but not as another context: {e}"),
        Ok(_) => panic!("a registration of the destroyed context was mapped in its share group"),
    }
    drop(target);
    assert!(
        gl_is(gl::IsFramebuffer, framebuffer),
        "dropping the dead context's target deleted framebuffer {framebuffer} of B"
    );
    drop(registered);
    let _ = g.ctx.check_drop_errors();
    for name in mine {
        // SAFETY: B is current and made these framebuffers.
        unsafe { gl::DeleteFramebuffers(1, &name) };
    }
    check_gl();
    drop(b);
    g.gl.make_current().unwrap();
    delete_buffer(buffer);
    check_gl();
}

/// A buffer registered in G, then labelled by the application (`glObjectLabel`, a correct GL
/// call), is still refused by a context that shares it with G: one object, one registration.
#[test]
fn an_application_label_does_not_undo_a_claim() {
    let Some(g) = gpu() else { return };
    let buffer = GlObject::buffer(gl_buffer(BYTES, None));
    let first = RegisteredBuffer::register(&g.ctx, *buffer, RegisterFlags::NONE).unwrap();
    set_buffer_label(*buffer, "the application's own label");
    let shared = g.gl.new_shared().unwrap();
    let second = RegisteredBuffer::register(&g.ctx, *buffer, RegisterFlags::NONE);
    let twice = second.is_ok();
    drop(second);
    drop(shared);
    g.gl.make_current().unwrap();
    assert!(
        !twice,
        "a context of the share group registered buffer {} a second time after the \
         application relabelled it",
        *buffer
    );
    drop(first);
    drop(buffer);
    g.check_no_errors();
}

/// Register, map, leak the guard (`mem::forget`, safe), drop the registration with no GL
/// context current: the driver keeps the resource mapped (its unregister was refused), so the
/// buffer stays claimed and cannot be registered and mapped a second time.
///
/// In a child process: the leaked mapping stays in the driver until the process ends.
#[test]
fn a_registration_left_mapped_keeps_its_claim() {
    in_child("a_registration_left_mapped_keeps_its_claim", || {
        let Some(g) = gpu() else { return };
        let (buffer, mut first) = registered_buffer(&g.ctx, BYTES, RegisterFlags::NONE);
        std::mem::forget(first.map(&g.stream).unwrap());
        g.gl.release_current().unwrap();
        eprintln!("step: dropping the registration with no GL context current");
        drop(first);
        g.gl.make_current().unwrap();
        let _ = g.ctx.check_drop_errors();
        eprintln!("step: registering again");
        match RegisteredBuffer::register(&g.ctx, buffer, RegisterFlags::NONE) {
            Err(Error::AlreadyRegistered { .. }) => {}
            Err(e) => panic!("refused, but not as registered: {e}"),
            Ok(mut second) => {
                let mapped = second.map(&g.stream).is_ok();
                panic!(
                    "buffer {buffer} was registered again (mapped: {mapped}) while the driver \
                     still held its first registration mapped"
                );
            }
        }
        eprintln!("step: refused");
        // The first registration stays mapped in the driver on purpose. Tearing the CUDA and
        // GL contexts down over it hung this child on the H200 (2026-12-02, 120 s, after the
        // assertion above had run), so the child ends here, without destructors or exit
        // handlers: what is checked is done.
        std::mem::forget(g);
        end_child_now();
    });
}

/// Ends this child process at once with status 0: no destructors, no `atexit` handlers (the
/// driver's included).
fn end_child_now() -> ! {
    unsafe extern "C" {
        fn _exit(status: i32) -> !;
    }
    use std::io::Write;
    let _ = std::io::stderr().flush();
    let _ = std::io::stdout().flush();
    // SAFETY: `_exit` is the C library's, which every Rust program on Unix links; it ends the
    // process and never returns.
    unsafe { _exit(0) }
}

/// The application deletes program names it did not make (every program up to 64, as a cleanup
/// loop that deletes too much would), and cuda-gl's share-group canary goes with them. A context
/// of the group made afterwards cannot be told to belong to it, so it may register the group's
/// buffer again; the group's first registration then refuses to map, rather than give a second
/// mapping of the same memory.
///
/// In a child process: the refused registration cannot be unregistered and leaks.
#[test]
fn a_deleted_group_canary_refuses_rather_than_aliases() {
    in_child("a_deleted_group_canary_refuses_rather_than_aliases", || {
        let Some(g) = gpu() else { return };
        let (buffer, mut first) = registered_buffer(&g.ctx, BYTES, RegisterFlags::NONE);
        for name in 1..=64 {
            // SAFETY: a context is current; only names that are programs are deleted.
            unsafe {
                if gl::IsProgram(name) == gl::TRUE {
                    gl::DeleteProgram(name);
                }
            }
        }
        check_gl();
        let shared = g.gl.new_shared().unwrap();
        let mut second = RegisteredBuffer::register(&g.ctx, buffer, RegisterFlags::NONE);
        let second_guard = match second.as_mut() {
            Ok(s) => s.map(&g.stream).ok(),
            Err(_) => None,
        };
        g.gl.make_current().unwrap();
        let first_mapped = first.map(&g.stream).map(drop).is_ok();
        shared.make_current().unwrap();
        let both = second_guard.is_some() && first_mapped;
        drop(second_guard);
        drop(second);
        drop(shared);
        g.gl.make_current().unwrap();
        assert!(
            !both,
            "two registrations of buffer {buffer} were mapped at once after the share group's \
             canary was deleted"
        );
        drop(first);
        let _ = g.ctx.check_drop_errors();
    });
}
