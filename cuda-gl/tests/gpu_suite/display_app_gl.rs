//! The display target against the application's own GL calls on the target's objects (issue
//! 32's bad input): a texture or pixel buffer the application deleted makes the next present a
//! typed error, never an upload into, or a write over, what the application has bound; a
//! present puts the application's bindings back. Needs `--features egl` and a GPU.
#![cfg(feature = "egl")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::display::assert_pattern;
use crate::gpu::*;
use cuda_gl::Error;
use cuda_gl::display::{DisplayError, DisplayTarget, Mode};

/// The application deletes a staged target's texture (a GL call allowed on any name of its
/// share group): the next upload finds its binding did not take and fails with a typed error,
/// instead of uploading into whatever the application has bound (or reading client memory at
/// address 0); the target still drops.
#[test]
fn a_texture_the_application_deleted_is_an_error_not_a_crash() {
    let Some(g) = gpu() else { return };
    for mode in [Mode::Staged, Mode::Stream] {
        let (mut target, _) = display_target(&g.ctx, (64, 64), Some(mode));
        let texture = target.texture().0;
        // SAFETY: a context is current; deleting a name is allowed (the application's call).
        unsafe { gl::DeleteTextures(1, &texture) };
        let mut failed = false;
        for _ in 0..4 {
            let presented = target.frame(&g.stream).and_then(|f| {
                f.pixels()?;
                f.present()
            });
            let flushed = target.flush();
            failed |= presented.is_err() || flushed.is_err();
        }
        assert!(failed, "{mode}: frames uploaded into a deleted texture");
        drop(target);
        let _ = g.ctx.take_drop_errors();
        // SAFETY: a context is current; glGetError takes no arguments.
        while unsafe { gl::GetError() } != gl::NO_ERROR {}
    }
}

/// The application's buffer bound to `target`, read back.
fn bound_buffer(target: u32) -> u32 {
    let mut bound = 0;
    // SAFETY: a context is current; a valid query; a valid out-pointer.
    unsafe { gl::GetIntegerv(target, &mut bound) };
    u32::try_from(bound).unwrap()
}

/// Whether staged targets have band buffers in the current context (NVIDIA's GL); false after
/// saying why the test skips.
pub(super) fn band_buffers_here() -> bool {
    let vendor = gl_vendor();
    if vendor.to_ascii_uppercase().starts_with("NVIDIA") {
        return true;
    }
    let why = format!("GL_VENDOR is {vendor:?}: band buffers are NVIDIA's GL's only");
    let _: Option<()> = skip(why);
    false
}

/// The GL vendor string of the current context.
fn gl_vendor() -> String {
    // SAFETY: a context is current; GL_VENDOR is a valid name; the string, when not null, is
    // NUL-terminated and lives as long as the context.
    let text = unsafe { gl::GetString(gl::VENDOR) };
    if text.is_null() {
        return String::new();
    }
    // SAFETY: as above.
    unsafe { std::ffi::CStr::from_ptr(text.cast()) }
        .to_string_lossy()
        .into_owned()
}

/// The staged mode on NVIDIA's GL writes each band of a frame into a pixel buffer of its own,
/// through the copy write binding. A present puts the application's bindings back. When the
/// application deletes one of those buffers (a call allowed on any name of its share group),
/// the next present finds the name no longer the target's and fails with a typed error before
/// the first band, instead of writing into whatever the application has bound (here a buffer
/// of its own, bound for copies and for unpacking, which stays as it was): the texture keeps
/// the frame before, whole; the target still drops. Run with the first band's buffer deleted
/// and with the last's.
#[test]
fn a_pixel_buffer_the_application_deleted_is_an_error_not_a_crash() {
    let Some(g) = gpu() else { return };
    if !band_buffers_here() {
        return;
    }
    for deleted in [0, 2] {
        present_with_a_band_buffer_deleted(&g, deleted);
    }
}

/// The bytes of the bands a staged target cuts 1001x333 RGBA8 into on NVIDIA's GL: 65, 130
/// and 138 rows (256 KiB, 512 KiB, the rest; pinned by `bands_cover_the_frame_in_order`), each
/// written into a buffer of its own: sizes no other buffer of these tests has.
pub(super) const BAND_BYTES_1001X333: [usize; 3] = [65 * 4004, 130 * 4004, 138 * 4004];

/// The band buffers of the one staged 1001x333 RGBA8 target alive on NVIDIA's GL, in band
/// order, found among the context's buffer names by their sizes.
pub(super) fn band_buffers_1001x333() -> [u32; 3] {
    let buffer_size = |n: u32| {
        let mut size = 0;
        // SAFETY: a context is current; `n` is a live buffer; a valid out-pointer.
        unsafe {
            gl::BindBuffer(gl::COPY_READ_BUFFER, n);
            gl::GetBufferParameteriv(gl::COPY_READ_BUFFER, gl::BUFFER_SIZE, &mut size);
            gl::BindBuffer(gl::COPY_READ_BUFFER, 0);
        }
        usize::try_from(size).unwrap_or(0)
    };
    let mut bands: Vec<(u32, usize)> = (1..=4096)
        .filter(|&n| gl_is(gl::IsBuffer, n))
        .map(|n| (n, buffer_size(n)))
        .filter(|(_, size)| BAND_BYTES_1001X333.contains(size))
        .collect();
    bands.sort_by_key(|&(_, size)| size);
    let sizes: Vec<usize> = bands.iter().map(|&(_, size)| size).collect();
    assert_eq!(
        sizes, BAND_BYTES_1001X333,
        "a staged target on NVIDIA's GL has a pixel buffer per band: {bands:?}"
    );
    [bands[0].0, bands[1].0, bands[2].0]
}

/// One round of [`a_pixel_buffer_the_application_deleted_is_an_error_not_a_crash`]: band
/// `deleted`'s buffer deleted.
fn present_with_a_band_buffer_deleted(g: &Gpu, deleted: usize) {
    // An odd size, so that the target's buffers are the only ones of their sizes here.
    let (w, h) = (1001, 333);
    let (mut target, _) = display_target(&g.ctx, (w as u32, h as u32), Some(Mode::Staged));
    let pbo = band_buffers_1001x333()[deleted];
    // The application's own buffer, a frame and more of a sentinel, bound for copies and for
    // unpacking while the target presents.
    let sentinel = vec![0x5a5a_5a5a_u32; w * h + 1024];
    let mine = gl_buffer(sentinel.len() * 4, Some(&sentinel));
    // SAFETY: a context is current; `mine` is a live buffer.
    unsafe {
        gl::BindBuffer(gl::COPY_WRITE_BUFFER, mine);
        gl::BindBuffer(gl::PIXEL_UNPACK_BUFFER, mine);
    }
    let bindings = || {
        (
            bound_buffer(gl::COPY_WRITE_BUFFER_BINDING),
            bound_buffer(gl::PIXEL_UNPACK_BUFFER_BINDING),
        )
    };
    let fill = g.kernels.function("fill_u32").unwrap();
    let present = |target: &mut DisplayTarget, seed: u32| {
        let frame = target.frame(&g.stream)?;
        let pixels = frame.pixels()?;
        // SAFETY: the pixels hold `w * h` RGBA8 texels of this context, written on the
        // frame's stream before the present below.
        unsafe { launch_words(&fill, &g.stream, pixels.ptr(), w * h, seed) }.unwrap();
        frame.present()
    };
    present(&mut target, 5).unwrap();
    assert_eq!(
        bindings(),
        (mine, mine),
        "a staged present kept its own bindings"
    );
    // SAFETY: a context is current; unbinding the unpack buffer for the read-back below.
    unsafe { gl::BindBuffer(gl::PIXEL_UNPACK_BUFFER, 0) };
    let texels = read_texture_rgba8(target.texture().0, w, h, 0);
    assert_pattern(&texels, 5, "staged, 3 bands through a pixel buffer each");
    // SAFETY: a context is current; deleting a live name is allowed (the application's call);
    // `mine` is live.
    unsafe {
        gl::DeleteBuffers(1, &pbo);
        gl::BindBuffer(gl::PIXEL_UNPACK_BUFFER, mine);
    }
    for _ in 0..3 {
        let presented = present(&mut target, 6);
        assert!(
            matches!(
                presented,
                Err(Error::Display(DisplayError::ObjectReplaced {
                    object: "pixel buffer",
                    name,
                })) if name == pbo
            ),
            "band {deleted}: a present into a pixel buffer the application deleted: \
             {presented:?}"
        );
        assert_eq!(
            bindings(),
            (mine, mine),
            "band {deleted}: a failed present kept its own bindings"
        );
    }
    assert!(
        read_gl_buffer(mine, sentinel.len()) == sentinel,
        "band {deleted}: a present wrote into the application's buffer"
    );
    // SAFETY: a context is current; unbinding for the read-back.
    unsafe { gl::BindBuffer(gl::PIXEL_UNPACK_BUFFER, 0) };
    // Every buffer is asked for before the first band: the texture holds the old frame whole.
    let texels = read_texture_rgba8(target.texture().0, w, h, 0);
    let wrong = texels
        .iter()
        .enumerate()
        .filter(|&(i, &t)| t != pattern(i as u32, 5))
        .count();
    assert_eq!(
        wrong, 0,
        "band {deleted}: the texture after the failed presents: {wrong} texels wrong"
    );
    // SAFETY: a context is current; unbinding, then deleting the application's own buffer.
    unsafe {
        gl::BindBuffer(gl::COPY_WRITE_BUFFER, 0);
        gl::DeleteBuffers(1, &mine);
    }
    drop(target);
    let _ = g.ctx.take_drop_errors();
    // SAFETY: a context is current; glGetError takes no arguments.
    while unsafe { gl::GetError() } != gl::NO_ERROR {}
}
