//! A GL context that is not NVIDIA's (Mesa's llvmpipe) next to a working CUDA driver: every entry
//! point that needs the GL context's GPU returns `Error::NotNvidiaGl`, which says what to do.
//!
//! This needs an unusual process: libglvnd's EGL pointed at Mesa alone while libcuda is NVIDIA's.
//! On a GPU host: `bash ci/gpu/fetch-mesa-egl-debs.sh` here, carry `.mesa`, then
//! `source .mesa/mesa-env.sh` there before running this binary with `CUDA_GL_REQUIRE_MESA=1`. In
//! any other setup (CI has Mesa but no CUDA driver; a GPU host has NVIDIA's EGL) the test prints
//! why it cannot run and skips, unless `CUDA_GL_REQUIRE_MESA=1` makes that a failure.
//!
//! A binary of its own, not a module of `gpu_suite`: it runs in a process set up for it alone
//! (libglvnd's EGL pointed at Mesa by `.mesa/mesa-env.sh`), in which the suite's GPU tests get
//! no NVIDIA GL context.
#![cfg(feature = "egl")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod gpu;

use cuda_gl::egl::HeadlessContext;
use cuda_gl::{
    Context, Device, Error, GlDeviceList, ImageTarget, RegisterFlags, RegisteredBuffer,
    RegisteredImage, gl_devices,
};
use gpu::{delete_buffer, delete_texture, gl_buffer, gl_texture_storage};

fn skip_or_fail(reason: String) {
    if std::env::var("CUDA_GL_REQUIRE_MESA").is_ok_and(|v| v == "1") {
        panic!("CUDA_GL_REQUIRE_MESA=1, but the test cannot run: {reason}");
    }
    eprintln!("skipped: {reason}");
}

fn assert_not_nvidia(what: &str, err: &Error) {
    eprintln!("{what}: {err}");
    assert!(
        matches!(err, Error::NotNvidiaGl { .. }),
        "{what}: expected Error::NotNvidiaGl, got {err:?}"
    );
    let text = err.to_string();
    assert!(text.contains("not provided by the NVIDIA driver"), "{text}");
    assert!(text.contains("__EGL_VENDOR_LIBRARY_FILENAMES"), "{text}");
}

#[test]
fn mesa_gl_next_to_cuda_is_not_nvidia_gl() {
    let device = match Device::get(0) {
        Ok(d) => d,
        Err(e) => return skip_or_fail(format!("no CUDA device: {e}")),
    };
    let gl = match HeadlessContext::any_gl() {
        Ok(gl) => gl,
        Err(e) => return skip_or_fail(format!("no headless GL context: {e}")),
    };
    gl::load_with(|name| gl.get_proc_address(name));
    if !gl.is_software() {
        return skip_or_fail(format!(
            "the GL context is {} ({}), not a software renderer; point \
             __EGL_VENDOR_LIBRARY_FILENAMES at Mesa's vendor file (source .mesa/mesa-env.sh)",
            gl.renderer(),
            gl.vendor()
        ));
    }
    eprintln!(
        "GL: {} / {} / {}; CUDA device 0: {}",
        gl.vendor(),
        gl.renderer(),
        gl.version(),
        device.name().unwrap()
    );

    // The GL context's GPU, asked directly.
    let err = gl_devices(GlDeviceList::All).unwrap_err();
    assert_not_nvidia("cuGLGetDevices", &err);
    // A CUDA context "for the current GL context".
    let err = Context::for_current_gl().unwrap_err();
    assert_not_nvidia("Context::for_current_gl", &err);

    // Registration, from a CUDA context made without asking GL.
    let ctx = Context::new(&device).unwrap();
    let buffer = gl_buffer(4096, None);
    let err = RegisteredBuffer::register(&ctx, buffer, RegisterFlags::NONE).unwrap_err();
    assert_not_nvidia("register a buffer", &err);
    delete_buffer(buffer);

    let texture = gl_texture_storage(gl::TEXTURE_2D, 1, 64, 64, 1);
    let err = RegisteredImage::register(
        &ctx,
        texture,
        ImageTarget::Texture2D,
        RegisterFlags::SURFACE_LOAD_STORE,
    )
    .unwrap_err();
    assert_not_nvidia("register a texture", &err);
    delete_texture(texture);

    // The display target: `auto` picks the staged mode, says why, and its frames are right.
    display_target_is_staged(&ctx);

    // Nothing was left behind for a later call to report.
    ctx.check_drop_errors().unwrap();
}

/// On Mesa's GL, `auto` picks [`Mode::Staged`] and reports interop refused as not NVIDIA's GL
/// with the fix; frames drawn by a kernel into the pixels and through the surface equal the
/// CPU's at odd sizes and at 1080p, right after their present (uploaded band by band: 1080p
/// in 8 bands, 1001x2333 in 9, the last shorter).
fn display_target_is_staged(ctx: &std::sync::Arc<Context>) {
    use cuda_gl::display::Mode;
    let stream = cuda_gl::Stream::new(ctx, cuda_gl::StreamFlags::NonBlocking).unwrap();
    let kernels = cuda_gl::Module::from_ptx(ctx, gpu::TEST_PTX).unwrap();
    let fill = kernels.function("fill_u32").unwrap();
    let fill_surface = kernels.function("surface_fill_rgba8").unwrap();
    for (w, h) in [(1001u32, 333u32), (77, 1201), (1920, 1080), (1001, 2333)] {
        let (mut target, report) = gpu::display_target(ctx, (w, h), None);
        let line = report.to_string();
        eprintln!("{line}");
        assert_eq!(target.mode(), Mode::Staged, "{line}");
        assert!(
            line.contains("interop refused: not_nvidia_gl") && line.contains("fix: "),
            "{line}"
        );
        let words = w as usize * h as usize;
        // Seed 77 into the pixels, 78 through the surface (the target's CUDA array): both
        // reach the texture through pinned memory and the upload with no pixel buffer.
        for seed in [77u32, 78] {
            let frame = target.frame(&stream).unwrap();
            if seed == 77 {
                let ptr = frame.pixels().unwrap().ptr();
                // SAFETY: the pixels hold `words` RGBA8 texels of this context, written on the
                // frame's stream before its present.
                unsafe { gpu::launch_words(&fill, &stream, ptr, words, seed) }.unwrap();
            } else {
                let surface = frame.surface().unwrap();
                // SAFETY: the surface covers the w x h RGBA8 frame, written on the frame's
                // stream before its present.
                unsafe {
                    gpu::launch_image(
                        &fill_surface,
                        &stream,
                        surface,
                        (w as usize, h as usize),
                        seed,
                    )
                }
                .unwrap();
            }
            // No flush: the present has uploaded every band.
            frame.present().unwrap();
            let texels = gpu::read_texture_rgba8(target.texture().0, w as usize, h as usize, 0);
            let wrong = (0..words)
                .filter(|&i| texels[i] != gpu::pattern(i as u32, seed))
                .count();
            assert_eq!(
                wrong, 0,
                "staged {w}x{h} frame {seed}: {wrong} texels wrong"
            );
        }
    }
}

/// The one-call set-up on a machine whose GL is not on the CUDA GPU: `for_cuda_device_or_any`
/// falls back to Mesa's GL and says why, and `Context::for_current_gl_or` gives the CUDA device's
/// context instead of an error.
#[test]
fn set_up_falls_back_to_any_gl_and_says_why() {
    let device = match Device::get(0) {
        Ok(d) => d,
        Err(e) => return skip_or_fail(format!("no CUDA device: {e}")),
    };
    let gl = match HeadlessContext::for_cuda_device_or_any(&device) {
        Ok(gl) => gl,
        Err(e) => return skip_or_fail(format!("no headless GL context at all: {e}")),
    };
    if !gl.is_software() {
        return skip_or_fail(format!(
            "the GL context is {} ({}), not a software renderer: source .mesa/mesa-env.sh",
            gl.renderer(),
            gl.vendor()
        ));
    }
    let why = gl.fallback_reason().expect("a fallback says why");
    eprintln!("fell back to {} because: {why}", gl.renderer());
    assert_eq!(gl.cuda_device(), None);
    let ctx = Context::for_current_gl_or(&device).unwrap();
    assert_eq!(ctx.device().raw(), device.raw());
    // The error it stands in for is still there for a caller that asks.
    assert_not_nvidia(
        "Context::for_current_gl",
        &Context::for_current_gl().unwrap_err(),
    );
}
