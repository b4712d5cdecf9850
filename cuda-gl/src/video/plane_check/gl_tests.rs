//! The storage query `register` makes (`glapi::query::texture_2d_storage`), on whatever
//! headless GL this machine has (Mesa's llvmpipe on CI, NVIDIA's
//! GL on a GPU host), with no CUDA: what it says of immutable and mutable textures, and that in
//! an OpenGL 4.5 context it leaves the application's pending GL error and its binding alone.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::egl::{EglError, HeadlessConfig, HeadlessContext};
use crate::glapi::GlFns;
use crate::glapi::query::{TextureStorage, texture_2d_storage};

/// A headless GL context of `version` or later, current on this thread, or `None` (after
/// saying why) where this machine has no EGL library and none is required.
fn gl_context(test: &str, version: (u8, u8)) -> Option<HeadlessContext> {
    let required = ["CUDA_GL_REQUIRE_GPU", "CUDA_GL_REQUIRE_MESA"]
        .iter()
        .any(|knob| std::env::var(knob).is_ok_and(|v| v == "1"));
    let config = HeadlessConfig::default().with_gl_versions(&[version]);
    match HeadlessContext::any_gl_with(&config) {
        Ok(gl) => Some(gl),
        Err(e @ EglError::LibraryNotFound { .. }) if !required => {
            eprintln!("{test}: skipped, no EGL: {e}");
            None
        }
        Err(e) => panic!("{test}: HeadlessContext::any_gl_with({version:?}) failed: {e}"),
    }
}

/// A new 2-D texture: immutable (`glTexStorage2D`, `levels`) or mutable (`glTexImage2D`).
fn texture(fns: &GlFns, immutable: bool, levels: i32, format: u32, (w, h): (i32, i32)) -> u32 {
    let storage = fns
        .tex_storage_2d
        .expect("glTexStorage2D in an OpenGL 4.5 context");
    let mut name = 0;
    // SAFETY: a GL context is current; valid out-pointer and sizes; no unpack buffer is bound,
    // and glTexImage2D is given no data.
    unsafe {
        (fns.gen_textures)(1, &mut name);
        (fns.bind_texture)(gl::TEXTURE_2D, name);
        if immutable {
            storage(gl::TEXTURE_2D, levels, format, w, h);
        } else {
            let (external, kind) = (gl::RED, gl::UNSIGNED_BYTE);
            let null = std::ptr::null();
            (fns.tex_image_2d)(
                gl::TEXTURE_2D,
                0,
                format as i32,
                w,
                h,
                0,
                external,
                kind,
                null,
            );
        }
        (fns.bind_texture)(gl::TEXTURE_2D, 0);
    }
    name
}

#[test]
fn the_storage_query_reads_the_textures_and_leaves_the_applications_error_pending() {
    let test = "the_storage_query_reads_the_textures_and_leaves_the_applications_error_pending";
    let Some(_gl) = gl_context(test, (4, 5)) else {
        return;
    };
    let (_, _, fns) = crate::glapi::current_gl(test).unwrap();
    if fns.version() < (4, 5) {
        panic!("{test}: asked for OpenGL 4.5, got {:?}", fns.version());
    }
    let fixed = texture(fns, true, 2, gl::R8, (64, 36));
    let mutable = texture(fns, false, 1, gl::RG8, (33, 17));
    let other = texture(fns, false, 1, gl::R8, (8, 8));
    let expect = [
        (fixed, (64, 36), gl::R8, Some(2)),
        (mutable, (33, 17), gl::RG8, None),
    ];
    for (name, size, format, levels) in expect {
        // The application's own error, and its own binding, before the query.
        // SAFETY: a GL context is current; GL_INVALID_ENUM is what 0xFFFF raises, nothing else.
        unsafe {
            (fns.bind_texture)(gl::TEXTURE_2D, other);
            (fns.enable)(0xFFFF);
        }
        let storage = texture_2d_storage(fns, name).unwrap().unwrap();
        assert_eq!(
            storage,
            TextureStorage {
                size: (size.0 as u32, size.1 as u32),
                internal_format: format,
                immutable_levels: levels,
                immutability_known: true,
            },
            "texture {name}"
        );
        let (mut bound, error);
        // SAFETY: a GL context is current; valid out-pointer.
        unsafe {
            error = (fns.get_error)();
            bound = 0;
            (fns.get_integerv)(gl::TEXTURE_BINDING_2D, &mut bound);
        }
        assert_eq!(
            error,
            gl::INVALID_ENUM,
            "the application's pending error after the query"
        );
        assert_eq!(
            bound as u32, other,
            "the application's binding after the query"
        );
    }
    assert_eq!(texture_2d_storage(fns, 0xdead_beef).unwrap(), None);
}
