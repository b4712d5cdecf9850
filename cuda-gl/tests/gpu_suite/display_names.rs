//! The display target against a name the application deleted and GL then handed to the
//! application's own next object: the target tells its objects from others by their label, so
//! that its uploads fail with a typed error instead of writing the application's texture or
//! buffer, and its drop leaves that object alone. Needs `--features egl` and a GPU.
#![cfg(feature = "egl")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::display_app_gl::{BAND_BYTES_1001X333, band_buffers_1001x333, band_buffers_here};
use crate::gpu::*;
use cuda_gl::Error;
use cuda_gl::display::{DisplayError, DisplayTarget, Mode};

/// What the application's object holds, word by word.
const SENTINEL: u32 = 0x5a5a_5a5a;

/// Makes names with `gen` until it gives `name` (one just deleted), deleting the others; false
/// when GL gave another 256 names first.
fn take_name(
    gen_names: unsafe fn(i32, *mut u32),
    delete: unsafe fn(i32, *const u32),
    name: u32,
) -> bool {
    let mut others = Vec::new();
    let mut got = false;
    for _ in 0..256 {
        let mut n = 0;
        // SAFETY: a context is current; a valid out-pointer for one name.
        unsafe { gen_names(1, &mut n) };
        if n == name {
            got = true;
            break;
        }
        others.push(n);
    }
    // SAFETY: a context is current; the names were just made here and are deleted once.
    unsafe { delete(others.len() as i32, others.as_ptr()) };
    got
}

/// Draws `seed`'s pattern into the target's next frame through its pixels and presents it.
fn present(g: &Gpu, target: &mut DisplayTarget, seed: u32) -> cuda_gl::Result<()> {
    let (w, h) = target.size();
    let fill = g.kernels.function("fill_u32").unwrap();
    let frame = target.frame(&g.stream)?;
    let pixels = frame.pixels()?;
    // SAFETY: the pixels hold `w * h` RGBA8 texels of this context, written on the frame's
    // stream before the present below.
    unsafe { launch_words(&fill, &g.stream, pixels.ptr(), (w * h) as usize, seed) }.unwrap();
    frame.present()
}

/// Whether `result` is the target's refusal of `object` `name` (false for `Ok`; a panic for
/// any other error).
fn refused(result: &cuda_gl::Result<()>, object: &str, name: u32, mode: Mode) -> bool {
    match result {
        Ok(()) => false,
        Err(Error::Display(DisplayError::ObjectReplaced { object: o, name: n }))
            if *o == object && *n == name =>
        {
            true
        }
        Err(e) => panic!("{mode}: the {object} of a reused name: {e}"),
    }
}

/// The application's object `name` (a `what`, `texture` or `buffer`, of `glIs*` query `is`)
/// still holds what the application wrote (`unchanged`: its contents, read back, are the
/// sentinel), and dropping `target` (its drop errors taken) neither deletes it nor changes it.
/// Each message starts with `prefix` (the mode, say).
fn check_left_alone(
    g: &Gpu,
    target: DisplayTarget,
    (is, name): (unsafe fn(u32) -> u8, u32),
    what: &str,
    prefix: &str,
    unchanged: impl Fn() -> bool,
) {
    assert!(
        unchanged(),
        "{prefix}a present wrote into the application's {what}"
    );
    drop(target);
    let _ = g.ctx.take_drop_errors();
    assert!(
        gl_is(is, name),
        "{prefix}dropping the target deleted the application's {what}"
    );
    assert!(
        unchanged(),
        "{prefix}dropping the target changed the application's {what}"
    );
}

/// The application deletes the target's texture and makes a texture of its own of the same
/// size and format, which GL gives the same name: no mode's upload writes it (each fails with
/// [`DisplayError::ObjectReplaced`]; in interop mode a surface frame too, before the
/// map), and dropping the target leaves it alive and as it was.
#[test]
fn a_texture_name_the_application_reused_is_neither_written_nor_deleted() {
    let Some(g) = gpu() else { return };
    let (w, h) = (64, 64);
    for mode in [Mode::Interop, Mode::Staged, Mode::Stream] {
        let (mut target, _) = display_target(&g.ctx, (w as u32, h as u32), Some(mode));
        present(&g, &mut target, 5).unwrap();
        target.flush().unwrap();
        let name = target.texture().0;
        // SAFETY: a context is current; deleting a name is allowed (the application's call).
        unsafe { gl::DeleteTextures(1, &name) };
        if !take_name(gl::GenTextures, gl::DeleteTextures, name) {
            let why = format!("{mode}: GL did not hand texture name {name} out again");
            let _: Option<()> = skip(why);
            continue;
        }
        // SAFETY: a context is current; `name` was just made (above) and gets storage here.
        unsafe {
            gl::BindTexture(gl::TEXTURE_2D, name);
            gl::TexStorage2D(gl::TEXTURE_2D, 1, gl::RGBA8, w as i32, h as i32);
            gl::BindTexture(gl::TEXTURE_2D, 0);
        }
        let sentinel = vec![SENTINEL; w * h];
        upload_texels_rgba8(name, w, h, &sentinel);
        let (mut presents_refused, mut flushes_refused) = (0, 0);
        for _ in 0..3 {
            let presented = present(&g, &mut target, 6);
            presents_refused += usize::from(refused(&presented, "texture", name, mode));
            let flushed = target.flush();
            flushes_refused += usize::from(refused(&flushed, "texture", name, mode));
        }
        if matches!(mode, Mode::Stream) {
            // A stream uploads the frames pushed before at a later present or flush.
            assert!(
                presents_refused + flushes_refused > 0,
                "{mode}: nothing refused"
            );
        } else {
            assert_eq!(presents_refused, 3, "{mode}: presents refused");
        }
        if matches!(mode, Mode::Interop) {
            // A frame drawn through its surface: refused before CUDA maps the texture.
            let frame = target.frame(&g.stream).unwrap();
            let surface = frame.surface().map(|_| ());
            assert!(
                refused(&surface, "texture", name, mode),
                "{mode}: a surface of a reused texture name: {surface:?}"
            );
        }
        let prefix = format!("{mode}: ");
        check_left_alone(
            &g,
            target,
            (gl::IsTexture, name),
            "texture",
            &prefix,
            || read_texture_rgba8(name, w, h, 0) == sentinel,
        );
        // SAFETY: a context is current; the application's own texture, deleted once.
        unsafe { gl::DeleteTextures(1, &name) };
        check_gl();
    }
}

/// On NVIDIA's GL (where staged frames go through a pixel buffer per band): the application
/// deletes the second band's buffer and makes a buffer of its own of the same size, which GL
/// gives the same name. The present fails with [`DisplayError::ObjectReplaced`] before
/// writing it, and dropping the target leaves it alive and as it was.
#[test]
fn a_band_buffer_name_the_application_reused_is_neither_written_nor_deleted() {
    let Some(g) = gpu() else { return };
    if !band_buffers_here() {
        return;
    }
    let (mut target, _) = display_target(&g.ctx, (1001, 333), Some(Mode::Staged));
    present(&g, &mut target, 5).unwrap();
    let bands = band_buffers_1001x333();
    let name = bands[1];
    // SAFETY: a context is current; deleting a name is allowed (the application's call).
    unsafe { gl::DeleteBuffers(1, &name) };
    if !take_name(gl::GenBuffers, gl::DeleteBuffers, name) {
        let _: Option<()> = skip(format!("GL did not hand buffer name {name} out again"));
        return;
    }
    let sentinel = vec![SENTINEL; BAND_BYTES_1001X333[1] / 4];
    // SAFETY: a context is current; `name` was just made (above); binding makes the buffer,
    // given the sentinel's bytes; unbound after.
    unsafe {
        gl::BindBuffer(gl::COPY_WRITE_BUFFER, name);
        gl::BufferData(
            gl::COPY_WRITE_BUFFER,
            (sentinel.len() * 4) as isize,
            sentinel.as_ptr().cast(),
            gl::STATIC_DRAW,
        );
        gl::BindBuffer(gl::COPY_WRITE_BUFFER, 0);
    }
    check_gl();
    for _ in 0..3 {
        let presented = present(&g, &mut target, 6);
        assert!(
            refused(&presented, "pixel buffer", name, Mode::Staged),
            "a present into a reused band buffer name: {presented:?}"
        );
    }
    check_left_alone(&g, target, (gl::IsBuffer, name), "buffer", "", || {
        read_gl_buffer(name, sentinel.len()) == sentinel
    });
    assert!(
        !gl_is(gl::IsBuffer, bands[0]) && !gl_is(gl::IsBuffer, bands[2]),
        "dropping the target left its own band buffers {} and {}",
        bands[0],
        bands[2]
    );
    // SAFETY: a context is current; the application's own buffer, deleted once.
    unsafe { gl::DeleteBuffers(1, &name) };
    check_gl();
}
