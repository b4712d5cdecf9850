//! gl-kit on a real context: `HeadlessContext::any_gl()` (Mesa's llvmpipe on CI, NVIDIA's
//! driver on a GPU host). Each test makes its objects, round-trips data through them and checks
//! the bytes; where there is no libEGL it prints why and passes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use cuda_gl::egl::HeadlessContext;
use gl_kit::blit::Blit;
use gl_kit::framebuffer::{self, Color};
use gl_kit::upload::{self, Source};
use gl_kit::{Kind, Owned, buffer, readback, texture};

/// A current context with the `gl` crate loaded, or `None` after saying why.
fn context(test: &str) -> Option<HeadlessContext> {
    match HeadlessContext::any_gl() {
        Ok(ctx) => {
            gl::load_with(|name| ctx.get_proc_address(name));
            Some(ctx)
        }
        Err(e) if std::env::var("CUDA_GL_REQUIRE_GPU").as_deref() != Ok("1") => {
            eprintln!("{test}: skipped, no headless OpenGL: {e}");
            None
        }
        Err(e) => panic!("{test}: no headless OpenGL: {e}"),
    }
}

/// `w` x `h` RGBA8 texels, each different (bottom row first).
fn texels(w: u32, h: u32, seed: u8) -> Vec<u8> {
    (0..w * h * 4)
        .map(|i| (i as u8).wrapping_mul(7) ^ seed)
        .collect()
}

#[test]
fn a_texture_round_trips_and_the_blit_copies_it_exactly() {
    let Some(_ctx) = context("a_texture_round_trips_and_the_blit_copies_it_exactly") else {
        return;
    };
    let (w, h) = (37, 23);
    let pixels = texels(w, h, 0x5A);
    let source = Owned::texture(texture::rgba8(w, h, 1, gl::NEAREST).unwrap());
    upload::rgba8(gl::TEXTURE_2D, *source, (w, h, 1), Source::Host(&pixels)).unwrap();
    assert_eq!(
        readback::texture::<u8>(gl::TEXTURE_2D, *source, 0).unwrap(),
        pixels
    );

    // Drawn at its size with NEAREST, one fragment per texel: an exact copy.
    let target = Owned::texture(texture::rgba8(w, h, 1, gl::NEAREST).unwrap());
    let fbo = framebuffer::with_color(Color::Texture(*target)).unwrap();
    let fbo = Owned::new(Kind::Framebuffer, fbo);
    let blit = Blit::new().unwrap();
    blit.draw((gl::TEXTURE_2D, *source), *fbo, (w, h));
    gl_kit::check("drawing").unwrap();
    assert_eq!(readback::framebuffer(*fbo, (w, h)).unwrap(), pixels);
    let packed = readback::texture::<u32>(gl::TEXTURE_2D, *target, 0).unwrap();
    assert_eq!(gl_kit::plain::bytes_of(&packed), pixels);
}

#[test]
fn arrays_buffers_and_renderbuffers() {
    let Some(_ctx) = context("arrays_buffers_and_renderbuffers") else {
        return;
    };
    let (w, h, layers) = (8, 4, 3);
    let pixels = texels(w, h * layers, 0x33);
    let array = Owned::texture(texture::rgba8_array(w, h, layers).unwrap());
    let size = (w, h, layers);
    upload::rgba8(gl::TEXTURE_2D_ARRAY, *array, size, Source::Host(&pixels)).unwrap();
    let all = readback::texture::<[u8; 4]>(gl::TEXTURE_2D_ARRAY, *array, 0).unwrap();
    assert_eq!(all.concat(), pixels);

    // A buffer written, copied into another on the GPU, uploaded from, read back.
    let bytes = pixels.len();
    let from = Owned::buffer(buffer::create(bytes, gl::DYNAMIC_DRAW, None).unwrap());
    buffer::write(*from, 0, &pixels).unwrap();
    let to = Owned::buffer(buffer::create_from(&vec![0u32; bytes], gl::DYNAMIC_DRAW).unwrap());
    buffer::copy(*from, *to, 4, bytes).unwrap();
    let words = buffer::read::<u32>(*to, bytes / 4 + 1).unwrap();
    assert_eq!(gl_kit::plain::bytes_of(&words)[4..], pixels);
    let flat = Owned::texture(texture::rgba8(w, h * layers, 1, gl::LINEAR).unwrap());
    upload::rgba8(
        gl::TEXTURE_2D,
        *flat,
        (w, h * layers, 1),
        Source::Buffer(*from),
    )
    .unwrap();
    assert_eq!(
        readback::texture::<u8>(gl::TEXTURE_2D, *flat, 0).unwrap(),
        pixels
    );

    // A renderbuffer's framebuffer, cleared and read back.
    let rbo = framebuffer::renderbuffer_rgba8(w, h).unwrap();
    let rbo = Owned::new(Kind::Renderbuffer, rbo);
    let fbo = Owned::new(
        Kind::Framebuffer,
        framebuffer::with_color(Color::Renderbuffer(*rbo)).unwrap(),
    );
    // SAFETY: a context is current and `gl` is loaded; no pointers are passed.
    unsafe {
        gl::BindFramebuffer(gl::FRAMEBUFFER, *fbo);
        gl::ClearColor(1.0, 0.0, 1.0, 1.0);
        gl::Clear(gl::COLOR_BUFFER_BIT);
        gl::BindFramebuffer(gl::FRAMEBUFFER, 0);
    }
    let cleared = readback::framebuffer(*fbo, (w, h)).unwrap();
    assert!(cleared.chunks_exact(4).all(|p| p == [255, 0, 255, 255]));
    gl_kit::check("the round trips").unwrap();
}

#[test]
fn errors_name_what_went_wrong() {
    let Some(_ctx) = context("errors_name_what_went_wrong") else {
        return;
    };
    let broken = "#version 330 core\nvoid main() { this is not GLSL; }";
    let err = gl_kit::shader::program(gl_kit::blit::VERTEX_SHADER, broken).unwrap_err();
    assert!(
        err.to_string()
            .contains("the fragment shader does not compile"),
        "{err}"
    );
    // SAFETY: a context is current; an invalid enum only records GL_INVALID_ENUM.
    unsafe { gl::Enable(0xFFFF) };
    let err = gl_kit::check("enabling nonsense").unwrap_err();
    assert!(
        err.to_string()
            .contains("GL_INVALID_ENUM (0x0500) while enabling nonsense"),
        "{err}"
    );
    gl_kit::check("after the check").unwrap();
    let short = upload::rgba8(gl::TEXTURE_2D, 0, (4, 4, 1), Source::Host(&[0; 8]));
    assert!(short.is_err(), "8 bytes uploaded as a 4x4 image");
}

/// Plane textures of one and two channels of 8- and 16-bit samples, at an odd width (rows
/// that no alignment but 1 packs tightly): `plane::write`'s texels read back byte for byte.
#[test]
fn plane_textures_round_trip_tightly_packed() {
    let Some(_ctx) = context("plane_textures_round_trip_tightly_packed") else {
        return;
    };
    let (w, h) = (33, 7);
    let formats = [
        (gl::R8, 1, 1),
        (gl::RG8, 2, 1),
        (gl::R16, 1, 2),
        (gl::RG16, 2, 2),
    ];
    for (internal, channels, bytes) in formats {
        let name = texture::storage_of(gl::TEXTURE_2D, internal, 1, (w, h, 1)).unwrap();
        let plane = Owned::texture(name);
        let len = w as usize * h as usize * channels * bytes;
        let want: Vec<u8> = (0..len).map(|i| (i * 13 % 251) as u8).collect();
        gl_kit::plane::write(*plane, 0, (w, h), (channels, bytes), &want).unwrap();
        let got = readback::plane(*plane, 0, channels, bytes).unwrap();
        assert_eq!(got, want, "{internal:#x}");
    }
}
