//! cuda-gl's EGL display next to another user of the same platform display: wgpu-hal's GL
//! backend, glutin, or the application's own EGL code, standing here as raw khronos-egl calls.
//! `eglGetPlatformDisplay` gives every caller in the process the same `EGLDisplay` for the same
//! platform, device and attributes, and each library initialises and terminates it on its own
//! count, so one library's `eglTerminate` ends the contexts of the others.
//!
//! - cuda-gl's last `HeadlessContext` dropped, the other user's context still draws (cuda-gl
//!   terminates no display another library may share);
//! - the other user's `eglTerminate` (what wgpu-hal does when its last GL instance goes): where
//!   EGL offers `EGL_KHR_display_reference`, cuda-gl's display is a reference-counted one of its
//!   own and its context still draws; elsewhere (Mesa 22.3) the context went with the display,
//!   and cuda-gl says so with `EglError::DisplayTerminated` instead of using dead handles;
//! - and once the other user has initialised the display again, with a context of its own that
//!   EGL may give the dead one's handle value, cuda-gl's context stays refused.
//!
//! Runs on Mesa (llvmpipe) on CI and on NVIDIA's EGL on a GPU host. A binary of its own: the
//! first test needs cuda-gl's context to be the process's last, and the second terminates the
//! display under every context of the process; the tests take one lock, so they run one at a
//! time. Without libEGL they skip, unless `CUDA_GL_REQUIRE_GPU=1` makes that a failure.
#![cfg(feature = "egl")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::ffi::c_void;
use std::sync::{Mutex, MutexGuard, OnceLock};

use cuda_gl::egl::{EglError, EglPlatform, HeadlessContext, Offscreen};
use khronos_egl as kegl;

type Egl = kegl::DynamicInstance<kegl::EGL1_5>;

const PLATFORM_DEVICE_EXT: kegl::Enum = 0x313F;
const PLATFORM_SURFACELESS_MESA: kegl::Enum = 0x31DD;

/// One test at a time: each must know every `HeadlessContext` of the process.
fn alone() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn require_gpu() -> bool {
    std::env::var("CUDA_GL_REQUIRE_GPU").is_ok_and(|v| v == "1")
}

/// cuda-gl's `any_gl()`, or `None` (after saying why) where libEGL is missing and no GPU is
/// required.
fn any_gl(test: &str) -> Option<HeadlessContext> {
    match HeadlessContext::any_gl() {
        Ok(gl) => {
            println!(
                "{test}: cuda-gl's context on {} ({}), {}",
                gl.renderer(),
                gl.platform(),
                gl.version()
            );
            Some(gl)
        }
        Err(e @ EglError::LibraryNotFound { .. }) if !require_gpu() => {
            eprintln!("{test}: skipped, no EGL: {e}");
            None
        }
        Err(e) => panic!("{test}: HeadlessContext::any_gl failed: {e}"),
    }
}

/// [`alone`], then cuda-gl's context of [`any_gl`] (`None`, the lock given back, where it
/// skips). Bind both (`let Some((_alone, gl))`): the context drops first, the lock last.
fn alone_with_gl(test: &str) -> Option<(MutexGuard<'static, ()>, HeadlessContext)> {
    let alone = alone();
    let gl = any_gl(test)?;
    Some((alone, gl))
}

/// [`alone_with_gl`] and another user of cuda-gl's display ([`OtherUser::open_beside`]).
fn beside_another_user(
    test: &str,
) -> Option<(MutexGuard<'static, ()>, HeadlessContext, OtherUser)> {
    let (alone, gl) = alone_with_gl(test)?;
    let other = OtherUser::open_beside(&gl);
    Some((alone, gl, other))
}

/// libEGL, opened once for the other user.
fn egl() -> &'static Egl {
    static EGL: OnceLock<Egl> = OnceLock::new();
    // SAFETY: libEGL.so.1 is the Khronos EGL library, whose symbols have khronos-egl's
    // signatures.
    EGL.get_or_init(|| unsafe { Egl::load_required_from_filename("libEGL.so.1") }.unwrap())
}

/// `name`'s address in libEGL or the current GL, as the function pointer type `F`.
///
/// # Safety
/// `F` is `name`'s C prototype as an `extern "system" fn`.
unsafe fn proc<F: Copy>(name: &str) -> F {
    let f = egl()
        .get_proc_address(name)
        .unwrap_or_else(|| panic!("eglGetProcAddress({name}) returned null"));
    assert_eq!(size_of::<F>(), size_of::<extern "system" fn()>());
    // SAFETY: same size (asserted); the caller names the prototype.
    unsafe { std::mem::transmute_copy(&f) }
}

/// Another user of the display: a context and a 16x16 pbuffer of its own, on the display that
/// `eglGetPlatformDisplay` gives for the platform (and device) of a cuda-gl context, with the
/// default attributes (as wgpu-hal asks for Mesa's surfaceless platform).
struct OtherUser {
    display: kegl::Display,
    context: kegl::Context,
    surface: kegl::Surface,
}

impl OtherUser {
    fn open_beside(gl: &HeadlessContext) -> OtherUser {
        let egl = egl();
        let (platform, native) = match gl.platform() {
            EglPlatform::MesaSurfaceless => (PLATFORM_SURFACELESS_MESA, kegl::DEFAULT_DISPLAY),
            EglPlatform::Device => {
                type QueryDevices =
                    unsafe extern "system" fn(kegl::Int, *mut *mut c_void, *mut kegl::Int) -> u32;
                // SAFETY: EGL_EXT_device_enumeration's prototype.
                let query: QueryDevices = unsafe { proc("eglQueryDevicesEXT") };
                let mut devices = [std::ptr::null_mut(); 32];
                let mut count = 0;
                // SAFETY: room for 32 devices; a valid out-pointer.
                let ok = unsafe { query(32, devices.as_mut_ptr(), &mut count) };
                assert_eq!(ok, kegl::TRUE, "eglQueryDevicesEXT");
                let index = gl.device_info().expect("a device platform's device").index;
                assert!(index < count as usize, "EGL device {index} of {count}");
                (PLATFORM_DEVICE_EXT, devices[index])
            }
            other => panic!("a platform this test does not know: {other}"),
        };
        // SAFETY: the native display is EGL_DEFAULT_DISPLAY (surfaceless) or an EGLDeviceEXT
        // (device platform), as the platforms require.
        let display = unsafe { egl.get_platform_display(platform, native, &[kegl::ATTRIB_NONE]) }
            .expect("eglGetPlatformDisplay");
        egl.initialize(display).expect("eglInitialize");
        egl.bind_api(kegl::OPENGL_API).expect("eglBindAPI");
        // An RGBA8 pbuffer config for desktop GL, as attribute pairs.
        let pairs = [
            (kegl::SURFACE_TYPE, kegl::PBUFFER_BIT),
            (kegl::RENDERABLE_TYPE, kegl::OPENGL_BIT),
            (kegl::RED_SIZE, 8),
            (kegl::GREEN_SIZE, 8),
            (kegl::BLUE_SIZE, 8),
            (kegl::ALPHA_SIZE, 8),
        ];
        let attribs: Vec<kegl::Int> = pairs
            .into_iter()
            .flat_map(|(name, value)| [name, value])
            .chain([kegl::NONE])
            .collect();
        let config = egl
            .choose_first_config(display, &attribs)
            .expect("eglChooseConfig")
            .expect("an RGBA8 pbuffer config");
        let context = egl
            .create_context(display, config, None, &[kegl::NONE])
            .expect("eglCreateContext");
        let surface = egl
            .create_pbuffer_surface(
                display,
                config,
                &[kegl::WIDTH, 16, kegl::HEIGHT, 16, kegl::NONE],
            )
            .expect("eglCreatePbufferSurface");
        OtherUser {
            display,
            context,
            surface,
        }
    }

    /// Makes its context current, clears its pbuffer to `rgba` and reads a pixel back, then
    /// releases the context (as wgpu-hal does around its calls): `Err` says which call failed.
    fn draws(&self, rgba: [u8; 4]) -> Result<(), String> {
        let egl = egl();
        egl.bind_api(kegl::OPENGL_API)
            .map_err(|e| format!("eglBindAPI: {e}"))?;
        egl.make_current(
            self.display,
            Some(self.surface),
            Some(self.surface),
            Some(self.context),
        )
        .map_err(|e| format!("eglMakeCurrent: {e}"))?;
        let read = clear_and_read(rgba);
        egl.make_current(self.display, None, None, None)
            .map_err(|e| format!("eglMakeCurrent(EGL_NO_CONTEXT): {e}"))?;
        if read == rgba {
            Ok(())
        } else {
            Err(format!("cleared to {rgba:?}, read back {read:?}"))
        }
    }

    /// Destroys its context and surface and terminates the display, as wgpu-hal's GL instance
    /// does when its last one goes.
    fn terminate(self) {
        let egl = egl();
        egl.destroy_surface(self.display, self.surface).unwrap();
        egl.destroy_context(self.display, self.context).unwrap();
        egl.terminate(self.display).unwrap();
    }
}

/// Clears the current context's draw framebuffer to `rgba` and reads its pixel (0, 0) back,
/// through GL entry points resolved here (no GL crate is loaded in this binary).
fn clear_and_read(rgba: [u8; 4]) -> [u8; 4] {
    type ClearColor = unsafe extern "system" fn(f32, f32, f32, f32);
    type Clear = unsafe extern "system" fn(u32);
    type ReadPixels = unsafe extern "system" fn(i32, i32, i32, i32, u32, u32, *mut c_void);
    // SAFETY: the GL 1.0 prototypes.
    let (clear_color, clear, read_pixels) = unsafe {
        (
            proc::<ClearColor>("glClearColor"),
            proc::<Clear>("glClear"),
            proc::<ReadPixels>("glReadPixels"),
        )
    };
    let f = |c: u8| f32::from(c) / 255.0;
    let mut out = [0u8; 4];
    // SAFETY: a context is current (the caller's); `out` holds the one RGBA8 pixel read, with
    // the default pack state (alignment 4, no pack buffer bound in a fresh context).
    unsafe {
        clear_color(f(rgba[0]), f(rgba[1]), f(rgba[2]), f(rgba[3]));
        clear(gl::COLOR_BUFFER_BIT);
        read_pixels(
            0,
            0,
            1,
            1,
            gl::RGBA,
            gl::UNSIGNED_BYTE,
            out.as_mut_ptr().cast(),
        );
    }
    out
}

/// What a cuda-gl context current on this thread draws: a 1x1 [`Offscreen`] (the context has
/// no default framebuffer) cleared to `rgba` and read back.
fn cuda_gl_draws(rgba: [u8; 4]) -> [u8; 4] {
    let target = Offscreen::new(1, 1).unwrap();
    target.bind().unwrap();
    let cleared = clear_and_read(rgba);
    let read = target.read_rgba8().unwrap();
    assert_eq!(
        read, cleared,
        "glReadPixels and Offscreen::read_rgba8 disagree"
    );
    cleared
}

/// cuda-gl's last `HeadlessContext` dropped, the other user of the display still draws:
/// cuda-gl must not `eglTerminate` a display that another library may share (before the fix
/// it did, and the other user's `eglMakeCurrent` failed with `EGL_NOT_INITIALIZED`; wgpu-hal
/// then panics in a `Drop`, aborting the process).
#[test]
fn another_users_context_outlives_cuda_gls_last_context() {
    let test = "another_users_context_outlives_cuda_gls_last_context";
    let Some((_alone, gl, other)) = beside_another_user(test) else {
        return;
    };
    other.draws([10, 20, 30, 255]).unwrap();
    // The process's last HeadlessContext (the tests run one at a time).
    drop(gl);
    if let Err(e) = other.draws([200, 100, 50, 255]) {
        panic!("{test}: the other user's context after cuda-gl's last context went: {e}");
    }
    other.terminate();
}

/// The other user terminates the display (wgpu-hal does when its last GL instance goes), then
/// cuda-gl's context: on a display of cuda-gl's own (`EGL_KHR_display_reference`) it is not
/// reached and still draws; on the shared one it went with the display, and cuda-gl refuses to
/// use its handles with `EglError::DisplayTerminated` (and its drop touches none of them).
#[test]
fn cuda_gls_context_after_another_user_terminates_the_display() {
    let test = "cuda_gls_context_after_another_user_terminates_the_display";
    let Some((_alone, gl)) = alone_with_gl(test) else {
        return;
    };
    println!(
        "{test}: cuda-gl's display is its own: {}",
        gl.has_own_display()
    );
    let other = OtherUser::open_beside(&gl);
    other.draws([1, 2, 3, 255]).unwrap();
    other.terminate();
    let current = gl.make_current();
    if gl.has_own_display() {
        current.unwrap();
        assert_eq!(cuda_gl_draws([9, 8, 7, 255]), [9, 8, 7, 255]);
        let shared = gl.new_shared().unwrap();
        assert_eq!(cuda_gl_draws([4, 5, 6, 255]), [4, 5, 6, 255]);
        drop(shared);
    } else {
        let e = current.unwrap_err();
        println!("{test}: make_current: {e}");
        assert!(
            matches!(
                e,
                EglError::DisplayTerminated {
                    call: "HeadlessContext::make_current",
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("help: "), "{e}");
        assert!(!e.is_unsupported_setup());
        let e = gl.new_shared().unwrap_err();
        assert!(matches!(e, EglError::DisplayTerminated { .. }), "{e:?}");
    }
    drop(gl);
    // The display is usable again for a new context (any_gl initialises it again).
    let Some(again) = any_gl(test) else { return };
    again.make_current().unwrap();
    assert_eq!(cuda_gl_draws([7, 7, 7, 255]), [7, 7, 7, 255]);
}

/// The other user terminates the shared display, cuda-gl's context is refused, and then the
/// other user initialises the display again with a context of its own (wgpu-hal does when a
/// new GL instance follows the last one). EGL may give that context the dead one's handle value
/// (NVIDIA's EGL reuses them), which `eglQueryContext` would then answer for: cuda-gl's context
/// stays refused, with the answer of the first refusal, and its drop touches nothing of the
/// other user's.
#[test]
fn cuda_gls_context_stays_refused_after_the_display_is_initialised_again() {
    let test = "cuda_gls_context_stays_refused_after_the_display_is_initialised_again";
    let Some((_alone, gl, first)) = beside_another_user(test) else {
        return;
    };
    first.terminate();
    let refused = gl.make_current();
    let again = OtherUser::open_beside(&gl);
    again.draws([3, 4, 5, 255]).unwrap();
    if gl.has_own_display() {
        println!("{test}: cuda-gl's display is its own; the terminate did not reach it");
        refused.unwrap();
        gl.make_current().unwrap();
    } else {
        let EglError::DisplayTerminated {
            code: first_code, ..
        } = refused.unwrap_err()
        else {
            panic!("{test}: make_current after the terminate was not DisplayTerminated");
        };
        println!("{test}: refused with {first_code} after the terminate");
        for _ in 0..2 {
            match gl.make_current().unwrap_err() {
                EglError::DisplayTerminated { code, .. } => assert_eq!(
                    code, first_code,
                    "{test}: refused afresh, not for good, once the display was initialised again"
                ),
                e => panic!("{test}: {e:?}"),
            }
        }
        assert!(matches!(
            gl.new_shared().unwrap_err(),
            EglError::DisplayTerminated { .. }
        ));
    }
    drop(gl);
    if let Err(e) = again.draws([6, 7, 8, 255]) {
        panic!("{test}: the other user's new context after cuda-gl's context dropped: {e}");
    }
    again.terminate();
}
