//! Headless EGL contexts: these run on CI through Mesa (llvmpipe) and on GPU hosts on NVIDIA.
//!
//! Set `CUDA_GL_REQUIRE_GPU=1` on a GPU host: missing libEGL then fails instead of skipping,
//! and `for_cuda_ordinal(0)` must succeed on an NVIDIA renderer.
#![cfg(feature = "egl")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Arc, Barrier};

use crate::gpu::{GlObject, load_gl_crate};
use cuda_gl::egl::{EglError, HeadlessConfig, HeadlessContext};
use gl_kit::Kind;
use gl_kit::framebuffer::{self, Color};

fn require_gpu() -> bool {
    std::env::var("CUDA_GL_REQUIRE_GPU").is_ok_and(|v| v == "1")
}

/// `any_gl()`, or `None` (after a one-line note) when libEGL is missing and no GPU is required.
fn any_gl_or_skip(test: &str) -> Option<HeadlessContext> {
    any_gl_with_or_skip(test, &HeadlessConfig::default())
}

/// [`any_gl_or_skip`] with `config`: `any_gl_with(config)`, the `gl` crate loaded.
fn any_gl_with_or_skip(test: &str, config: &HeadlessConfig) -> Option<HeadlessContext> {
    match HeadlessContext::any_gl_with(config) {
        Ok(ctx) => {
            load_gl_crate(&ctx);
            Some(ctx)
        }
        Err(e @ EglError::LibraryNotFound { .. }) if !require_gpu() => {
            eprintln!("{test}: skipped, no EGL: {e}");
            None
        }
        Err(e) => panic!("{test}: HeadlessContext::any_gl_with({config:?}) failed: {e}"),
    }
}

/// Asserts that [`clear_and_read`] of `rgba` reads `rgba` back.
fn assert_clears_to(rgba: [u8; 4]) {
    assert_eq!(clear_and_read(rgba), rgba);
}

/// Clears a 64x64 RGBA8 texture through an FBO to `rgba` and reads back pixel (10, 20).
fn clear_and_read(rgba: [u8; 4]) -> [u8; 4] {
    let [r, g, b, a] = rgba.map(|c| f32::from(c) / 255.0);
    let tex = GlObject::texture(gl_kit::texture::storage(gl::TEXTURE_2D, 1, (64, 64, 1)).unwrap());
    let fbo = framebuffer::with_color(Color::Texture(*tex)).unwrap();
    let fbo = GlObject::new(Kind::Framebuffer, fbo);
    // SAFETY: a context is current on this thread and `gl` is loaded; no pointers are passed.
    unsafe {
        gl::BindFramebuffer(gl::FRAMEBUFFER, *fbo);
        gl::Viewport(0, 0, 64, 64);
        gl::ClearColor(r, g, b, a);
        gl::Clear(gl::COLOR_BUFFER_BIT);
        gl::BindFramebuffer(gl::FRAMEBUFFER, 0);
    }
    let pixels = gl_kit::readback::framebuffer(*fbo, (64, 64)).unwrap();
    let at = (20 * 64 + 10) * 4;
    pixels[at..at + 4].try_into().unwrap()
}

#[test]
fn any_gl_clears_fbo_and_reads_pixel() {
    let Some(ctx) = any_gl_or_skip("any_gl_clears_fbo_and_reads_pixel") else {
        return;
    };
    eprintln!(
        "any_gl: {} / {} / {} on {:?} (software: {}, surfaceless: {}, CUDA device: {:?})",
        ctx.renderer(),
        ctx.vendor(),
        ctx.version(),
        ctx.platform(),
        ctx.is_software(),
        ctx.is_surfaceless(),
        ctx.cuda_device()
    );
    assert!(ctx.is_current());
    assert!(!ctx.renderer().is_empty());
    assert!(!ctx.get_proc_address("glClear").is_null());
    assert!(ctx.get_proc_address("gl\0Clear").is_null());
    // 0x33 = 51 = 0.2 * 255, exactly representable through the float round trip.
    assert_clears_to([0x33, 0x66, 0x99, 0xCC]);

    ctx.release_current().unwrap();
    assert!(!ctx.is_current());
    ctx.make_current().unwrap();
    assert!(ctx.is_current());
    assert_clears_to([0xFF, 0x00, 0x80, 0xFF]);
}

#[test]
fn two_contexts_on_two_threads() {
    // Probe first so that a machine without libEGL skips cleanly.
    let Some(probe) = any_gl_or_skip("two_contexts_on_two_threads") else {
        return;
    };
    drop(probe);

    let barrier = Arc::new(Barrier::new(2));
    let colours = [[0xFF, 0x00, 0x00, 0xFF], [0x00, 0x80, 0xFF, 0x40]];
    let handles: Vec<_> = colours
        .into_iter()
        .map(|colour| {
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                let ctx = HeadlessContext::any_gl().expect("any_gl on a worker thread");
                load_gl_crate(&ctx);
                // Both contexts exist and are current on their threads from here on.
                barrier.wait();
                let mut seen = Vec::new();
                for _ in 0..20 {
                    seen.push(clear_and_read(colour));
                }
                barrier.wait();
                drop(ctx);
                (colour, seen)
            })
        })
        .collect();
    for handle in handles {
        let (colour, seen) = handle.join().expect("worker thread panicked");
        assert!(seen.iter().all(|px| *px == colour), "{colour:?}: {seen:?}");
    }

    // Both contexts gone (a display of cuda-gl's own terminated with the last one, a shared one
    // left initialised): a new one must still work.
    let ctx = HeadlessContext::any_gl().unwrap();
    load_gl_crate(&ctx);
    assert_clears_to([1, 2, 3, 4]);
    drop(ctx);
}

#[test]
fn nested_contexts_on_one_thread() {
    let Some(first) = any_gl_or_skip("nested_contexts_on_one_thread") else {
        return;
    };
    let second = HeadlessContext::any_gl().unwrap();
    assert!(second.is_current());
    assert!(!first.is_current());
    assert_clears_to([9, 8, 7, 6]);
    drop(second);
    // Dropping the current context released it; the first one is still usable.
    first.make_current().unwrap();
    assert_clears_to([6, 7, 8, 9]);
}

#[test]
fn compute_shader_squares_buffer() {
    let Some(ctx) = any_gl_or_skip("compute_shader_squares_buffer") else {
        return;
    };
    if ctx.requested_gl_version() < (4, 3) {
        eprintln!(
            "compute_shader_squares_buffer: skipped, only OpenGL {}",
            ctx.version()
        );
        return;
    }
    let src = "#version 430
         layout(local_size_x = 64) in;
         layout(std430, binding = 0) buffer Data { float v[]; };
         void main() { uint i = gl_GlobalInvocationID.x; v[i] = v[i] * v[i]; }";
    let program = gl_kit::shader::link(&[(gl::COMPUTE_SHADER, src)]).unwrap();
    let program = GlObject::new(Kind::Program, program);
    let input: Vec<f32> = (0..256u16).map(f32::from).collect();
    let buffer = GlObject::buffer(gl_kit::buffer::create_from(&input, gl::DYNAMIC_COPY).unwrap());
    // SAFETY: `ctx` is current on this thread and `gl` is loaded; no pointers are passed.
    unsafe {
        gl::BindBufferBase(gl::SHADER_STORAGE_BUFFER, 0, *buffer);
        gl::UseProgram(*program);
        gl::DispatchCompute(4, 1, 1);
        gl::MemoryBarrier(gl::BUFFER_UPDATE_BARRIER_BIT);
        gl::UseProgram(0);
    }
    let output = gl_kit::buffer::read::<f32>(*buffer, input.len()).unwrap();
    let expected: Vec<f32> = input.iter().map(|x| x * x).collect();
    assert_eq!(output, expected);
}

#[test]
fn for_cuda_device_without_nvidia_names_the_vendor_file() {
    let result = HeadlessContext::for_cuda_ordinal(0);
    if require_gpu() {
        let ctx = result.expect("for_cuda_ordinal(0) on a GPU host");
        assert!(ctx.renderer().contains("NVIDIA"), "{}", ctx.renderer());
        assert_eq!(ctx.cuda_device(), Some(0));
        assert!(!ctx.is_software());
        return;
    }
    match result {
        Err(e @ EglError::LibraryNotFound { .. }) => {
            eprintln!("for_cuda_device_without_nvidia_names_the_vendor_file: skipped, no EGL: {e}");
        }
        Err(e @ EglError::NoMatchingDevice { .. }) => {
            let text = e.to_string();
            eprintln!("{text}");
            assert!(text.contains("__EGL_VENDOR_LIBRARY_FILENAMES"), "{text}");
            assert!(text.contains("no EGL device is CUDA device 0"), "{text}");
        }
        // libglvnd with no vendor library at all offers no client extensions.
        Err(e @ EglError::MissingClientExtensions { .. }) => {
            let text = e.to_string();
            eprintln!("{text}");
            assert!(text.contains("__EGL_VENDOR_LIBRARY_FILENAMES"), "{text}");
        }
        Err(e) => panic!("expected EglError::NoMatchingDevice, got {e:?}: {e}"),
        Ok(ctx) => {
            // An NVIDIA GPU is present after all (CUDA_GL_REQUIRE_GPU unset on a GPU host).
            assert_eq!(ctx.cuda_device(), Some(0));
        }
    }
}

#[test]
fn list_devices_reports_cuda_ids_consistently() {
    match cuda_gl::egl::list_devices() {
        Ok(devices) => {
            for d in &devices {
                eprintln!("{d}");
                if !d.has_nv_device_cuda {
                    assert_eq!(d.cuda_device, None);
                }
            }
        }
        Err(e @ (EglError::LibraryNotFound { .. } | EglError::MissingClientExtensions { .. }))
            if !require_gpu() =>
        {
            eprintln!("list_devices_reports_cuda_ids_consistently: skipped: {e}");
        }
        Err(e) => panic!("list_devices failed: {e}"),
    }
}

#[test]
fn pbuffer_and_debug_context() {
    let config = HeadlessConfig::default()
        .with_surfaceless(false)
        .with_debug(true)
        .with_gl_versions(&[(4, 6), (4, 5), (3, 3)]);
    let Some(ctx) = any_gl_with_or_skip("pbuffer_and_debug_context", &config) else {
        return;
    };
    assert!(!ctx.is_surfaceless());
    let mut flags = 0;
    // SAFETY: `ctx` is current on this thread and `gl` is loaded.
    unsafe { gl::GetIntegerv(gl::CONTEXT_FLAGS, &mut flags) };
    assert_ne!(
        flags & i32::try_from(gl::CONTEXT_FLAG_DEBUG_BIT).unwrap(),
        0,
        "not a debug context"
    );
    assert_clears_to([0x10, 0x20, 0x30, 0x40]);
}

/// An offscreen target: drawn into after `bind`, read back whole (bottom row first), sizes it
/// cannot have refused, and kept (not deleted) when dropped with another context current. Runs
/// on CI through Mesa as well as on NVIDIA.
#[test]
fn an_offscreen_target_draws_and_reads_back() {
    use cuda_gl::egl::Offscreen;
    use cuda_gl::{Error, UsageError};
    let Some(ctx) = any_gl_or_skip("an_offscreen_target_draws_and_reads_back") else {
        return;
    };
    let (w, h) = (7u32, 5u32);
    let target = Offscreen::new(w, h).unwrap();
    target.bind().unwrap();
    // SAFETY: a context is current and the gl crate is loaded; the target is bound.
    unsafe {
        gl::ClearColor(0.0, 1.0, 0.0, 1.0);
        gl::Clear(gl::COLOR_BUFFER_BIT);
    }
    // Pack state an application may have set, which would make glReadPixels write past a
    // tight buffer: neutralised for the read, and given back.
    // SAFETY: a context is current; plain pixel-store state.
    unsafe {
        gl::PixelStorei(gl::PACK_ROW_LENGTH, 100);
        gl::PixelStorei(gl::PACK_SKIP_ROWS, 3);
        gl::PixelStorei(gl::PACK_ALIGNMENT, 8);
    }
    let pixels = target.read_rgba8().unwrap();
    assert_eq!(pixels.len(), (w * h * 4) as usize);
    assert!(
        pixels.chunks(4).all(|p| p == [0, 255, 0, 255]),
        "{:?}",
        &pixels[..8]
    );
    let pack = |name| {
        let mut v = 0;
        // SAFETY: a context is current; a valid out-pointer.
        unsafe { gl::GetIntegerv(name, &mut v) };
        v
    };
    assert_eq!(
        [
            pack(gl::PACK_ROW_LENGTH),
            pack(gl::PACK_SKIP_ROWS),
            pack(gl::PACK_ALIGNMENT)
        ],
        [100, 3, 8],
        "the pack state was not given back"
    );
    // SAFETY: as above.
    unsafe {
        gl::PixelStorei(gl::PACK_ROW_LENGTH, 0);
        gl::PixelStorei(gl::PACK_SKIP_ROWS, 0);
        gl::PixelStorei(gl::PACK_ALIGNMENT, 4);
    }
    for (bw, bh) in [(0, 5), (7, 0), (1 << 20, 5)] {
        match Offscreen::new(bw, bh) {
            Err(err @ Error::Usage(UsageError::OffscreenSize { .. })) => {
                assert!(err.to_string().contains("GL_MAX_TEXTURE_SIZE"), "{err}");
            }
            other => panic!("{bw}x{bh}: {other:?}"),
        }
    }
    let (framebuffer, texture) = (target.framebuffer(), target.texture().0);
    let other = HeadlessContext::any_gl().unwrap();
    drop(target); // leaked: another context is current
    other.release_current().unwrap();
    ctx.make_current().unwrap();
    // SAFETY: a context is current; the queries change no state.
    unsafe {
        assert_eq!(
            gl::IsFramebuffer(framebuffer),
            gl::TRUE,
            "deleted from elsewhere"
        );
        assert_eq!(gl::IsTexture(texture), gl::TRUE, "deleted from elsewhere");
        gl::DeleteFramebuffers(1, &framebuffer);
        gl::DeleteTextures(1, &texture);
        assert_eq!(gl::GetError(), gl::NO_ERROR);
    }
    drop(other);
}

/// An object of a destroyed context is refused in the context made next, whatever handle value
/// that one got (NVIDIA's EGL reuses them; Mesa may), and dropping it leaves the new context's
/// objects of the same names alone. Runs on CI through Mesa as well as on NVIDIA.
#[test]
fn an_object_of_a_destroyed_context_is_refused_in_the_next() {
    use cuda_gl::egl::Offscreen;
    let Some(old) = any_gl_or_skip("an_object_of_a_destroyed_context_is_refused_in_the_next")
    else {
        return;
    };
    let target = Offscreen::new(4, 4).unwrap();
    let names = (target.framebuffer(), target.texture());
    drop(old);
    let new = HeadlessContext::any_gl().unwrap();
    let mine = Offscreen::new(4, 4).unwrap();
    eprintln!(
        "old names {names:?}, new names {:?}",
        (mine.framebuffer(), mine.texture())
    );
    let refused = target.bind();
    assert!(
        refused.is_err(),
        "a target of the destroyed context was bound"
    );
    let read = target.read_rgba8();
    assert!(read.is_err(), "a target of the destroyed context was read");
    drop(target);
    mine.bind().unwrap();
    // SAFETY: a context is current; the queries change no state.
    unsafe {
        assert_eq!(gl::IsFramebuffer(mine.framebuffer()), gl::TRUE);
        assert_eq!(gl::IsTexture(mine.texture().0), gl::TRUE);
    }
    drop(mine);
    drop(new);
}

/// The one-call set-up where GL runs on the CUDA GPU: `for_cuda_device_or_any` lands there with
/// no fallback, and `Context::for_current_gl_or` is the GL context's own CUDA device (and an
/// error with no GL context current). (Where GL
/// is elsewhere, `tests/not_nvidia_gl.rs` checks the fallback.)
#[test]
fn set_up_on_the_cuda_gpu_needs_no_fallback() {
    let device = match cuda_gl::Device::get(0) {
        Ok(device) => device,
        Err(e) if !require_gpu() => return eprintln!("skipped, no CUDA device: {e}"),
        Err(e) => panic!("no CUDA device 0: {e}"),
    };
    let gl = cuda_gl::egl::HeadlessContext::for_cuda_device_or_any(&device).unwrap();
    if gl.is_software() && !require_gpu() {
        return eprintln!("skipped, GL is {} here", gl.renderer());
    }
    assert!(
        gl.fallback_reason().is_none(),
        "fell back: {:?}",
        gl.fallback_reason()
    );
    assert_eq!(gl.cuda_device(), Some(device.raw()));
    let ctx = cuda_gl::Context::for_current_gl_or(&device).unwrap();
    assert_eq!(ctx.device().raw(), device.raw());
    // With no GL context current, an error, not `device`'s context as if GL were elsewhere.
    gl.release_current().unwrap();
    let none = cuda_gl::Context::for_current_gl_or(&device);
    assert!(
        matches!(none, Err(cuda_gl::Error::NoGlContext { .. })),
        "{none:?}"
    );
    gl.make_current().unwrap();
}

/// `software_first` gets a software renderer wherever one is offered (Mesa's llvmpipe on CI),
/// and never fails where `any_gl` works.
#[test]
fn software_first_picks_a_software_renderer_where_there_is_one() {
    let config = cuda_gl::egl::HeadlessConfig::default().with_software_first(true);
    let Some(plain) = any_gl_or_skip("software_first_picks_a_software_renderer") else {
        return;
    };
    let plain_is_software = plain.is_software();
    drop(plain);
    let ctx = HeadlessContext::any_gl_with(&config).unwrap();
    eprintln!(
        "software first: {} (software: {}); any_gl: software {plain_is_software}",
        ctx.renderer(),
        ctx.is_software()
    );
    assert!(
        ctx.is_software() || !plain_is_software,
        "any_gl found a software renderer but software_first did not"
    );
}
