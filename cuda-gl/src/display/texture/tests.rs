//! The texture's GL side on whatever headless GL this machine has, with no CUDA: Mesa's
//! llvmpipe on CI and on machines without NVIDIA's EGL, NVIDIA's GL on a GPU host. Frames are
//! uploaded from client memory band by band, as the staged mode does on any GL but NVIDIA's,
//! and read back through [`Texture::read`] (what `DisplayTarget::read_pixels` calls): every
//! byte equal, the first frame on a fresh texture and the next, at odd sizes, with the
//! application's pixel-store state far from neutral (and put back).
#![allow(clippy::unwrap_used, clippy::panic)]

use super::*;
use crate::display::staged::bands_for_client_upload;
use crate::egl::test_gl::any_gl;
use crate::image::Format;

/// A frame's bytes: every byte a function of its index and `seed`, alpha included, so that
/// a frame that did not arrive, arrived shifted or is another frame's cannot pass.
fn frame_bytes(len: usize, seed: u32) -> Vec<u8> {
    (0..len as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761).wrapping_add(seed) >> 13) as u8)
        .collect()
}

/// Uploads `pixels` (a frame of `texture`, rows tightly packed) as the staged mode does on any
/// GL but NVIDIA's: the bands of a client upload, each `glTexSubImage2D` straight from memory.
fn upload_in_bands(texture: &Texture, pixels: &[u8]) {
    let (row, height) = texture.frame_shape();
    assert_eq!(pixels.len(), row * height);
    texture
        .upload("glTexSubImage2D (a test frame)", false, |fns| {
            texture.bind_for_upload(fns, 0)?;
            for rows in bands_for_client_upload(row, height) {
                let band = &pixels[rows.first * row..(rows.first + rows.count) * row];
                texture.check_rows(&rows, Some(band.len()))?;
                // SAFETY: the texture is bound and no pixel unpack buffer is (both read back);
                // the rows lie within the texture and `band` is them, tightly packed (checked);
                // GL reads client memory before the call returns.
                unsafe { texture.tex_sub_image(fns, &rows, band.as_ptr().cast()) };
            }
            Ok(())
        })
        .unwrap();
}

/// The application's pixel-store state these tests set: a row length, skips and an alignment
/// that a 1001-texel RGBA8 row (4004 bytes, no multiple of 8) does not meet, both ways.
const APP_STORE: [(u32, i32); 8] = [
    (gl::UNPACK_ALIGNMENT, 8),
    (gl::UNPACK_ROW_LENGTH, 1003),
    (gl::UNPACK_SKIP_ROWS, 2),
    (gl::UNPACK_SKIP_PIXELS, 1),
    (gl::PACK_ALIGNMENT, 8),
    (gl::PACK_ROW_LENGTH, 1005),
    (gl::PACK_SKIP_ROWS, 3),
    (gl::PACK_SKIP_PIXELS, 2),
];

/// The current values of [`APP_STORE`]'s parameters.
fn store_state(fns: &GlFns) -> Vec<i32> {
    APP_STORE
        .iter()
        .map(|&(name, _)| {
            let mut value = -1;
            // SAFETY: a context is current; every parameter is a valid query; a valid
            // out-pointer.
            unsafe { (fns.get_integerv)(name, &mut value) };
            value
        })
        .collect()
}

/// Frames uploaded the staged way (client memory, in bands) read back byte for byte through
/// `Texture::read`, at the sizes of the failure seen on Mesa's llvmpipe (a 1001x333 RGBA8
/// target read back as all zeros: the read went through a `glGetnTexImage` stub that wrote
/// nothing) and others, the first frame on a fresh texture and the next one.
#[test]
fn frames_uploaded_in_bands_read_back_byte_for_byte() {
    let test = "frames_uploaded_in_bands_read_back_byte_for_byte";
    let Some(gl) = any_gl(test) else { return };
    eprintln!("{test}: GL {} ({})", gl.renderer(), gl.vendor());
    let (owner, fns) = GlOwner::current(test).unwrap();
    for &(name, value) in &APP_STORE {
        // SAFETY: a context is current; valid parameters and values.
        unsafe { (fns.pixel_storei)(name, value) };
    }
    let app = store_state(fns);
    for (w, h) in [(1001, 333), (77, 1201), (1920, 1080), (1, 1)] {
        check_size(fns, w, h).unwrap();
        let layout = Layout::packed((w, h), Format::Rgba8).unwrap();
        let texture = Texture::create(owner, fns, layout, true).unwrap();
        for seed in [1, 2] {
            let frame = frame_bytes(texture.frame_bytes(), seed);
            upload_in_bands(&texture, &frame);
            let read = texture.read().unwrap();
            assert_eq!(read.len(), frame.len(), "{w}x{h} frame {seed}: length");
            let wrong = read.iter().zip(&frame).filter(|(a, b)| a != b).count();
            let first = read.iter().zip(&frame).position(|(a, b)| a != b);
            assert!(
                wrong == 0,
                "{w}x{h} frame {seed}: {wrong} of {} bytes read back differ from those \
                 uploaded, the first at byte {first:?}",
                frame.len()
            );
        }
        assert_eq!(store_state(fns), app, "{w}x{h}: the application's state");
    }
    fns.check("the test's GL calls").unwrap();
}
