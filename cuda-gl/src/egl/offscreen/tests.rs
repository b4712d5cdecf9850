//! [`Offscreen::read_rgba8`] against state the application's own GL calls leave, on whatever
//! headless GL this machine has (Mesa's llvmpipe here), with no CUDA.
#![allow(clippy::unwrap_used, clippy::panic)]

use super::*;
use crate::egl::HeadlessContext;
use crate::egl::test_gl::any_gl;
use gl_kit::entry::entry_point;

/// The GL calls the tests make as the application, resolved from the context.
struct App {
    read_buffer: unsafe extern "system" fn(u32),
    clear_color: unsafe extern "system" fn(f32, f32, f32, f32),
    clear: unsafe extern "system" fn(u32),
}

impl App {
    fn load(gl: &HeadlessContext) -> App {
        let address = |name: &str| gl.get_proc_address(name);
        // SAFETY: each field's type is the named entry point's signature (Khronos registry).
        unsafe {
            App {
                read_buffer: entry_point(address, "glReadBuffer").unwrap(),
                clear_color: entry_point(address, "glClearColor").unwrap(),
                clear: entry_point(address, "glClear").unwrap(),
            }
        }
    }
}

/// After [`Offscreen::bind`], the framebuffer's read buffer is the application's to set as it
/// draws (`glReadBuffer(GL_NONE)`, as a depth-only pass does, is a correct call on it): a read
/// of the target still reads its colour texture, and the read buffer is as the application set
/// it afterwards.
#[test]
fn a_read_reads_the_colour_texture_whatever_read_buffer_the_application_set() {
    let test = "a_read_reads_the_colour_texture_whatever_read_buffer_the_application_set";
    let Some(gl) = any_gl(test) else { return };
    let app = App::load(&gl);
    let target = Offscreen::new(5, 3).unwrap();
    target.bind().unwrap();
    let fns = target.owner.check(test).unwrap();
    // SAFETY: a context is current and the target's framebuffer is bound; valid arguments.
    unsafe {
        (app.clear_color)(0.2, 0.4, 0.6, 0.8);
        (app.clear)(gl::COLOR_BUFFER_BIT);
        (app.read_buffer)(gl::NONE);
    }
    fns.check("the test's GL calls").unwrap();
    let pixels = target.read_rgba8().unwrap();
    let want = [51u8, 102, 153, 204];
    assert!(
        pixels.chunks(4).all(|p| p == want),
        "{test}: read {:?}, not the clear colour {want:?} everywhere",
        &pixels[..4]
    );
    let mut read_buffer = -1;
    // SAFETY: a context is current; a valid query and out-pointer.
    unsafe { (fns.get_integerv)(gl::READ_BUFFER, &mut read_buffer) };
    assert_eq!(
        read_buffer,
        gl::NONE as i32,
        "{test}: the application's read buffer"
    );
}

/// An error the application's earlier GL calls left pending is not taken for the read's own,
/// and not consumed unsaid: GL cannot set an error flag again, so the read takes it and warns,
/// naming its code, and reads the target.
#[test]
fn an_error_the_application_left_pending_is_taken_with_a_warning() {
    let test = "an_error_the_application_left_pending_is_taken_with_a_warning";
    let Some(_gl) = any_gl(test) else { return };
    let target = Offscreen::new(2, 2).unwrap();
    let fns = target.owner.check(test).unwrap();
    let warnings = crate::egl::test_gl::Warnings::start();
    let mut ignored = 0;
    // SAFETY: a context is current; a query of an enum that is none raises GL_INVALID_ENUM and
    // writes nothing; a valid out-pointer.
    unsafe { (fns.get_integerv)(0x1234, &mut ignored) };
    target.read_rgba8().unwrap();
    // SAFETY: a context is current; no arguments.
    assert_eq!(unsafe { (fns.get_error)() }, gl::NO_ERROR, "{test}: taken");
    let here = warnings.here();
    assert!(
        here.iter()
            .any(|w| w.contains("0x0500") && w.contains("glReadPixels")),
        "{test}: no warning names the application's GL_INVALID_ENUM: {here:?}"
    );
}
