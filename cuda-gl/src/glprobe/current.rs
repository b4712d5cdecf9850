//! Which OpenGL context is current on this thread, asked of the GL libraries the process already
//! loaded (EGL and GLX), without loading anything new.
//!
//! The driver answers `CUDA_ERROR_INVALID_VALUE` when a GL object is registered with no GL
//! context current, the same code as for a bad name; this tells the two apart. It also records
//! which context owns a registered object ([`GlOwner`]), so that calls made with another one
//! current are refused before they reach the driver.

use crate::error::{CudaError, Error, Result};
use cuda_gl_sys::CUresult;
use std::ffi::c_void;

/// What is known about the GL context current on this thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Current {
    /// A context is current; the value is its handle.
    Context(usize),
    /// The GL libraries are loaded and report no current context.
    None,
    /// No GL library is loaded, or none could be asked.
    Unknown,
}

/// `eglGetCurrentContext` / `glXGetCurrentContext`.
type GetCurrent = unsafe extern "C" fn() -> *mut c_void;

/// One library's "current context" query, looked up once the library is loaded and then kept
/// (with the library, so the pointer stays valid), so that the checks before every map, unmap
/// and unregister cost one call each.
#[cfg(unix)]
struct Probe {
    library: &'static str,
    symbol: &'static [u8],
    found: std::sync::OnceLock<(libloading::os::unix::Library, GetCurrent)>,
}

#[cfg(unix)]
impl Probe {
    const fn new(library: &'static str, symbol: &'static [u8]) -> Probe {
        Probe {
            library,
            symbol,
            found: std::sync::OnceLock::new(),
        }
    }

    /// The query, if the library is loaded (asked again on every call until it is).
    fn get(&self) -> Option<GetCurrent> {
        use libloading::os::unix::{Library, RTLD_LAZY};
        const RTLD_NOLOAD: i32 = 0x4;
        if let Some((_, f)) = self.found.get() {
            return Some(*f);
        }
        // SAFETY: RTLD_NOLOAD only returns a library that is already loaded (running no
        // initialisers); the symbol is the standard `void *fn(void)` of EGL/GLX, and the library
        // is kept open next to the pointer.
        let found = unsafe {
            let lib = Library::open(Some(self.library), RTLD_LAZY | RTLD_NOLOAD).ok()?;
            let f: GetCurrent = *lib.get::<GetCurrent>(self.symbol).ok()?;
            (lib, f)
        };
        Some(self.found.get_or_init(|| found).1)
    }

    /// The handle of the current context (0 for none), if the library is loaded.
    fn ask(&self) -> Option<usize> {
        let f = self.get()?;
        // SAFETY: a `void *fn(void)` from a library that stays loaded.
        Some(unsafe { f() } as usize)
    }

    /// As [`ask`](Self::ask), but only through a query found earlier: no `dlopen`.
    fn ask_found(&self) -> Option<usize> {
        let (_, f) = self.found.get()?;
        // SAFETY: a `void *fn(void)` from a library that stays loaded.
        Some(unsafe { f() } as usize)
    }
}

#[cfg(unix)]
static PROBES: [Probe; 3] = [
    Probe::new("libEGL.so.1", b"eglGetCurrentContext\0"),
    Probe::new("libGLX.so.0", b"glXGetCurrentContext\0"),
    Probe::new("libGL.so.1", b"glXGetCurrentContext\0"),
];

#[cfg(unix)]
fn answers() -> [Option<usize>; 3] {
    [PROBES[0].ask(), PROBES[1].ask(), PROBES[2].ask()]
}

#[cfg(not(unix))]
fn answers() -> [Option<usize>; 3] {
    [None, None, None]
}

/// A context reported by a query already found, without looking for the other libraries: the
/// common case before every map and unmap costs one or two calls and no `dlopen` (which, for a
/// library that is not loaded, searches the file system).
#[cfg(unix)]
fn current_from_found() -> Option<usize> {
    PROBES.iter().filter_map(Probe::ask_found).find(|&h| h != 0)
}

#[cfg(not(unix))]
fn current_from_found() -> Option<usize> {
    None
}

/// Whether EGL or GLX report a GL context current on this thread.
pub(crate) fn gl_is_current() -> bool {
    matches!(current(), Current::Context(_))
}

/// The GL context current on this thread, as EGL or GLX see it.
pub(crate) fn current() -> Current {
    if let Some(handle) = current_from_found() {
        return Current::Context(handle);
    }
    let answers = answers();
    if let Some(handle) = answers.iter().flatten().find(|&&h| h != 0) {
        Current::Context(*handle)
    } else if answers.iter().any(Option::is_some) {
        Current::None
    } else {
        Current::Unknown
    }
}

/// The GL context that owns an object: the one current when the object was registered or
/// created. It holds no handle when neither EGL nor GLX could tell (another GL platform); the
/// driver's own checks are then all there is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GlOwner(Option<usize>);

impl GlOwner {
    /// The context current on this thread, as the owner of what is being created.
    ///
    /// # Errors
    /// [`Error::NoGlContext`] naming `call` when EGL or GLX report that no context is current.
    pub(crate) fn current(call: &'static str) -> Result<GlOwner> {
        match current() {
            Current::Context(h) => Ok(GlOwner(Some(h))),
            Current::None => Err(no_gl_context(call)),
            Current::Unknown => Ok(GlOwner(None)),
        }
    }

    /// The owning context's handle, 0 when it could not be told.
    pub(crate) fn handle(self) -> usize {
        self.0.unwrap_or(0)
    }

    /// Refuses `call` unless the owning context is current on this thread (accepted when it
    /// cannot be told).
    ///
    /// # Errors
    /// [`Error::NoGlContext`] when no context is current; [`Error::WrongGlContext`] when another
    /// one is.
    pub(crate) fn check(self, call: &'static str) -> Result<()> {
        match (self.0, current()) {
            (_, Current::None) => Err(no_gl_context(call)),
            (Some(owner), Current::Context(now)) if owner != now => Err(Error::WrongGlContext {
                call,
                owner,
                current: now,
            }),
            _ => Ok(()),
        }
    }
}

/// [`Error::NoGlContext`] for a call that was not made because no GL context is current.
pub(crate) fn no_gl_context(call: &'static str) -> Error {
    Error::NoGlContext {
        source: CudaError::new(call, CUresult::CUDA_ERROR_INVALID_GRAPHICS_CONTEXT),
    }
}
