//! Bad input on a real GPU: each case gets a typed error whose message says what to do.
//!
//! Covered elsewhere, and listed here so the whole table is in one place:
//! - GL name 0, a name that is no object, a buffer name registered as a texture:
//!   `gpu_interop::errors::error_name_that_is_not_a_gl_object` (and the unit test
//!   `graphics::tests::rejects_gl_name_zero`);
//! - an invalid (array index, mip level) on a mapped 2D or 2D-array texture:
//!   `gpu_interop::images_of_each_kind_map_as_arrays`;
//! - a kernel launched with the wrong argument count or sizes:
//!   `gpu_interop::errors::error_kernel_launched_with_wrong_arguments`;
//! - PTX that is not PTX, PTX newer than the driver:
//!   `gpu_interop::errors::error_ptx_newer_than_driver_and_not_ptx`;
//! - a cubin that is junk, PTX text, or a truncated ELF or fatbin:
//!   `gpu_interop::errors::error_cubin_that_is_junk_or_truncated_is_refused_before_the_driver`;
//! - a driver library path that is not a library: `cuda-gl-sys/tests/driver_path_env.rs`
//!   (`CUDA_GL_DRIVER_PATH`) and `cuda-gl-sys/tests/load.rs` (`load_from`).
#![cfg(feature = "egl")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::gpu::*;
use cuda_gl::UsageError;
use cuda_gl::{DeviceBuffer, Error, ImageTarget, RegisterFlags, RegisteredBuffer, RegisteredImage};

/// Prints one row of the bad-input table: the case, the error variant and its first help line.
fn row(case: &str, err: &Error) {
    let debug = format!("{err:?}");
    let variant = debug
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or_default();
    let text = err.to_string();
    let help = text
        .lines()
        .find(|l| l.starts_with("help:"))
        .unwrap_or_else(|| text.lines().next().unwrap_or_default());
    eprintln!("bad input | {case} | Error::{variant} | {help}");
}

/// An immutable 16x16 texture with `internal` format; `None` when this GL refuses the format.
fn texture_of_format(internal: u32) -> Option<u32> {
    let mut tex = 0;
    // SAFETY: the test's GL context is current on this thread.
    let err = unsafe {
        while gl::GetError() != gl::NO_ERROR {}
        gl::GenTextures(1, &mut tex);
        gl::BindTexture(gl::TEXTURE_2D, tex);
        gl::TexStorage2D(gl::TEXTURE_2D, 1, internal, 16, 16);
        gl::BindTexture(gl::TEXTURE_2D, 0);
        gl::GetError()
    };
    if err == gl::NO_ERROR {
        Some(tex)
    } else {
        delete_texture(tex);
        None
    }
}

#[test]
fn texture_formats_that_cannot_be_surfaces() {
    let Some(g) = gpu() else { return };
    let stream = &g.stream;
    // RGBA8 is the control: it registers, maps and gives a surface.
    let control = texture_of_format(gl::RGBA8).unwrap();
    let mut res = RegisteredImage::register(
        &g.ctx,
        control,
        ImageTarget::Texture2D,
        RegisterFlags::SURFACE_LOAD_STORE,
    )
    .unwrap();
    res.map(stream).unwrap().surface().map(|_| ()).unwrap();
    res.unregister().unwrap();
    delete_texture(control);

    let mut refused = 0;
    for (label, internal) in [
        ("GL_DEPTH_COMPONENT32F", gl::DEPTH_COMPONENT32F),
        ("GL_DEPTH24_STENCIL8", gl::DEPTH24_STENCIL8),
        ("GL_RGB8", gl::RGB8),
        ("GL_SRGB8_ALPHA8", gl::SRGB8_ALPHA8),
        ("GL_RGB32F", gl::RGB32F),
        ("GL_R11F_G11F_B10F", gl::R11F_G11F_B10F),
        ("GL_RGB9_E5", gl::RGB9_E5),
    ] {
        let Some(tex) = texture_of_format(internal) else {
            eprintln!("{label}: this GL has no such texture format; not tried");
            continue;
        };
        // Register for surfaces, map, and ask for the surface: the error may come at any step.
        let outcome = RegisteredImage::register(
            &g.ctx,
            tex,
            ImageTarget::Texture2D,
            RegisterFlags::SURFACE_LOAD_STORE,
        )
        .and_then(|mut res| {
            res.map(stream)?.surface().map(|_| ())?;
            res.unregister()
        });
        match outcome {
            Ok(()) => eprintln!("{label}: CUDA takes it as a surface on this driver"),
            Err(err) => {
                row(&format!("{label} texture with SURFACE_LOAD_STORE"), &err);
                assert!(
                    matches!(err, Error::UnsupportedImage { .. }),
                    "{label}: {err:?}"
                );
                assert!(err.to_string().contains("format"), "{label}: {err}");
                refused += 1;
            }
        }
        // Without surface load/store, the format may still register (that is what the
        // `flags_only` field says).
        let plain =
            RegisteredImage::register(&g.ctx, tex, ImageTarget::Texture2D, RegisterFlags::NONE)
                .and_then(RegisteredImage::unregister);
        eprintln!("{label}: registered without SURFACE_LOAD_STORE: {plain:?}");
        delete_texture(tex);
    }
    g.ctx.check_drop_errors().unwrap();
    // Depth formats are not among the formats CUDA registers.
    assert!(refused > 0, "no texture format was refused");
}

#[test]
fn zero_size_buffers() {
    let Some(g) = gpu() else { return };
    // A GL buffer with storage of size 0: refused at registration or at the map.
    let mut name = 0;
    // SAFETY: the test's GL context is current on this thread.
    unsafe {
        gl::GenBuffers(1, &mut name);
        gl::BindBuffer(gl::ARRAY_BUFFER, name);
        gl::BufferData(gl::ARRAY_BUFFER, 0, std::ptr::null(), gl::DYNAMIC_DRAW);
        gl::BindBuffer(gl::ARRAY_BUFFER, 0);
    }
    check_gl();
    let err = RegisteredBuffer::register(&g.ctx, name, RegisterFlags::NONE)
        .and_then(|mut res| res.map(&g.stream).map(|m| m.size()))
        .unwrap_err();
    row("GL buffer of size 0", &err);
    // The driver answers CUDA_ERROR_OUT_OF_MEMORY; cuda-gl asks GL for the buffer's size.
    assert!(matches!(err, Error::NotAGlObject { .. }), "{err:?}");
    assert!(err.to_string().contains("non-zero size"), "{err}");
    delete_buffer(name);

    // A name from glGenBuffers that was never bound is not a buffer object yet.
    let mut unbound = 0;
    // SAFETY: as above.
    unsafe { gl::GenBuffers(1, &mut unbound) };
    let err = RegisteredBuffer::register(&g.ctx, unbound, RegisterFlags::NONE).unwrap_err();
    row("name from glGenBuffers, never bound", &err);
    assert!(matches!(err, Error::NotAGlObject { .. }), "{err:?}");
    delete_buffer(unbound);

    // Device memory of zero elements.
    let err = DeviceBuffer::<u32>::zeroed(&g.ctx, 0).unwrap_err();
    row("DeviceBuffer of 0 elements", &err);
    assert!(
        matches!(
            err,
            Error::Usage(UsageError::ZeroSize {
                what: "a device buffer"
            })
        ),
        "{err:?}"
    );
    g.ctx.check_drop_errors().unwrap();
}

#[test]
fn image_target_that_does_not_match_the_texture() {
    let Some(g) = gpu() else { return };
    let tex = gl_texture_rgba8(16, 16, 1);
    // The driver itself registers a GL_TEXTURE_2D texture as any of these (seen on driver 580);
    // cuda-gl asks GL for the texture's target first.
    for target in [
        ImageTarget::Rectangle,
        ImageTarget::Texture2DArray,
        ImageTarget::Texture3D,
        ImageTarget::CubeMap,
    ] {
        let err = RegisteredImage::register(&g.ctx, tex, target, RegisterFlags::NONE).unwrap_err();
        row(
            &format!("GL_TEXTURE_2D texture registered as {target:?}"),
            &err,
        );
        assert!(
            matches!(
                err,
                Error::WrongImageTarget {
                    actual: gl::TEXTURE_2D,
                    ..
                }
            ),
            "{target:?}: {err:?}"
        );
        assert!(err.to_string().contains("ImageTarget::Texture2D"), "{err}");
    }
    // A texture name registered as a renderbuffer: no renderbuffer has that name.
    match RegisteredImage::register_renderbuffer(&g.ctx, tex, RegisterFlags::NONE) {
        Ok(res) => {
            eprintln!("a texture name registered as a renderbuffer: accepted by this driver");
            res.unregister().unwrap();
        }
        Err(err) => {
            row("texture name registered as a renderbuffer", &err);
            assert!(
                matches!(
                    err,
                    Error::NotAGlObject { .. } | Error::UnsupportedImage { .. }
                ),
                "{err:?}"
            );
        }
    }
    delete_texture(tex);
    g.ctx.check_drop_errors().unwrap();
}

#[test]
fn cube_map_face_and_mip_level_out_of_range() {
    let Some(g) = gpu() else { return };
    let cube = gl_texture_storage(gl::TEXTURE_CUBE_MAP, 2, 8, 8, 1);
    let mut res =
        RegisteredImage::register(&g.ctx, cube, ImageTarget::CubeMap, RegisterFlags::NONE).unwrap();
    {
        let mapped = res.map(&g.stream).unwrap();
        for face in 0..6 {
            let a = mapped.array(face, 1).unwrap();
            assert_eq!((a.width(), a.height()), (4, 4), "face {face}");
        }
        let err = mapped.array(6, 0).unwrap_err();
        row("cube map face 6 of a mapped cube map", &err);
        assert!(
            matches!(err, Error::InvalidSubresource { index: 6, .. }),
            "{err:?}"
        );
        // Level 2 lies beyond the texture's 2 levels but inside the full mip chain of an 8x8
        // image (8, 4, 2, 1): the driver hands out an array for it (seen on driver 580), so only
        // levels past the full chain are refused.
        eprintln!(
            "mip level 2 of a 2-level 8x8 cube map: {:?}",
            mapped.array(0, 2).map(|a| (a.width(), a.height()))
        );
        let err = mapped.array(0, 9).unwrap_err();
        row("mip level 9 of a mapped 8x8 cube map", &err);
        assert!(
            matches!(err, Error::InvalidSubresource { level: 9, .. }),
            "{err:?}"
        );
    }
    res.unregister().unwrap();
    delete_texture(cube);
    g.ctx.check_drop_errors().unwrap();
}
