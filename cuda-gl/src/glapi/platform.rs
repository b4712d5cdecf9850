//! The GL platforms cuda-gl asks, EGL and GLX, found among the libraries the process has already
//! loaded (never loading one itself): which context is current on this thread, and the GL entry
//! points, resolved through the platform's own `eglGetProcAddress` / `glXGetProcAddressARB`.
//!
//! Both platforms return entry points that do not depend on the context (EGL 1.5 section 3.10,
//! GLX_ARB_get_proc_address: "context-independent"), so one table per platform serves every
//! context of the process. Whether a context *supports* an entry point is asked of the context
//! (its version and extensions) before the call.

use super::table::GlFns;
use crate::error::{Error, Result};
use std::ffi::{c_char, c_void};
use std::sync::OnceLock;

/// `eglGetCurrentContext` / `glXGetCurrentContext`.
type GetCurrent = unsafe extern "C" fn() -> *mut c_void;
/// `eglGetProcAddress` / `glXGetProcAddressARB`.
type GetProc = unsafe extern "C" fn(*const c_char) -> *const c_void;

/// One platform library's two queries, found once the library is loaded and then kept with the
/// library (so the pointers stay valid), and the GL table resolved through it.
pub(super) struct Platform {
    library: &'static str,
    current: &'static [u8],
    proc_address: &'static [u8],
    #[cfg(unix)]
    found: OnceLock<(libloading::os::unix::Library, GetCurrent, GetProc)>,
    table: OnceLock<Result<GlFns, &'static str>>,
}

impl Platform {
    const fn new(
        library: &'static str,
        current: &'static [u8],
        proc_address: &'static [u8],
    ) -> Platform {
        Platform {
            library,
            current,
            proc_address,
            #[cfg(unix)]
            found: OnceLock::new(),
            table: OnceLock::new(),
        }
    }

    /// The two queries, if the library is loaded (looked for again on every call until it is).
    #[cfg(unix)]
    fn get(&self) -> Option<(GetCurrent, GetProc)> {
        use libloading::os::unix::{Library, RTLD_LAZY};
        const RTLD_NOLOAD: i32 = 0x4;
        if let Some((_, c, p)) = self.found.get() {
            return Some((*c, *p));
        }
        // SAFETY: RTLD_NOLOAD only returns a library that is already loaded (running no
        // initialisers); the symbols are EGL's and GLX's `void *fn(void)` and
        // `void (*fn(const char *))(void)`, and the library is kept open next to the pointers.
        let found = unsafe {
            let lib = Library::open(Some(self.library), RTLD_LAZY | RTLD_NOLOAD).ok()?;
            let current: GetCurrent = *lib.get::<GetCurrent>(self.current).ok()?;
            let proc_address: GetProc = *lib.get::<GetProc>(self.proc_address).ok()?;
            (lib, current, proc_address)
        };
        let (_, c, p) = self.found.get_or_init(|| found);
        Some((*c, *p))
    }

    #[cfg(not(unix))]
    fn get(&self) -> Option<(GetCurrent, GetProc)> {
        None
    }

    /// The handle of the context current on this thread (0 for none), if the library is
    /// loaded.
    fn ask(&self) -> Option<usize> {
        let (current, _) = self.get()?;
        // SAFETY: a `void *fn(void)` from a library that stays loaded.
        Some(unsafe { current() } as usize)
    }

    /// As [`ask`](Self::ask), but only through a query found earlier: no `dlopen`.
    fn ask_found(&self) -> Option<usize> {
        #[cfg(unix)]
        {
            let (_, current, _) = self.found.get()?;
            // SAFETY: a `void *fn(void)` from a library that stays loaded.
            Some(unsafe { current() } as usize)
        }
        #[cfg(not(unix))]
        None
    }

    /// The address of GL entry point `name` (with or without its terminating NUL), resolved
    /// through this platform's own resolver; null where it has none, or where the library is
    /// not loaded. For a loader that another GL library takes (wgpu's glow, feature `wgpu-gl`).
    #[cfg(feature = "wgpu-gl")]
    pub(super) fn proc_address(&self, name: &str) -> *const c_void {
        let Some((_, proc_address)) = self.get() else {
            return std::ptr::null();
        };
        let mut bytes = Vec::with_capacity(name.len() + 1);
        bytes.extend_from_slice(name.trim_end_matches('\0').as_bytes());
        if bytes.contains(&0) {
            // A name with a NUL inside names no entry point.
            return std::ptr::null();
        }
        bytes.push(0);
        // SAFETY: a NUL-terminated name; the platform's resolver returns null or the address
        // of that entry point, and only reads the name.
        unsafe { proc_address(bytes.as_ptr().cast()) }
    }

    /// The GL entry points, resolved through this platform once.
    ///
    /// # Errors
    /// [`Error::MissingGlFunction`] when the platform resolves no address for an entry point
    /// every GL 3.2 context has.
    pub(super) fn fns(&self) -> Result<&GlFns> {
        let table = self.table.get_or_init(|| {
            let Some((_, proc_address)) = self.get() else {
                return Err("glGetString");
            };
            let mut resolve = |name: &'static str| {
                let mut bytes = Vec::with_capacity(name.len() + 1);
                bytes.extend_from_slice(name.as_bytes());
                bytes.push(0);
                // SAFETY: a NUL-terminated name; the platform's resolver returns null or the
                // address of that entry point.
                unsafe { proc_address(bytes.as_ptr().cast()) }
            };
            // SAFETY: (1) `resolve` is the platform's own resolver, whose non-null answers are
            // the named entry points with the registry's signatures; (2) the library stays
            // loaded (kept in `found`) for the life of the process.
            unsafe { GlFns::load(&mut resolve) }
        });
        table
            .as_ref()
            .map_err(|&function| Error::MissingGlFunction { function })
    }
}

/// The platforms, asked in this order. libglvnd's libGL.so.1 forwards to libGLX.so.0; a libGL
/// of its own (not libglvnd) has GLX in it.
pub(super) static PLATFORMS: [Platform; 3] = [
    Platform::new(
        "libEGL.so.1",
        b"eglGetCurrentContext\0",
        b"eglGetProcAddress\0",
    ),
    Platform::new(
        "libGLX.so.0",
        b"glXGetCurrentContext\0",
        b"glXGetProcAddressARB\0",
    ),
    Platform::new(
        "libGL.so.1",
        b"glXGetCurrentContext\0",
        b"glXGetProcAddressARB\0",
    ),
];

/// The address of GL entry point `name` through platform `platform` (an index into
/// [`PLATFORMS`], as [`Current::Context`] gives it); null where it has none. Entry points of
/// both platforms do not depend on the context (see the module docs), so the loader of a GL
/// library that is given it serves the context current now and any other of the process.
#[cfg(feature = "wgpu-gl")]
pub(crate) fn proc_address(platform: usize, name: &str) -> *const c_void {
    PLATFORMS
        .get(platform)
        .map_or(std::ptr::null(), |p| p.proc_address(name))
}

/// What is known about the GL context current on this thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Current {
    /// A context is current: its platform (an index into [`PLATFORMS`]) and handle.
    Context { platform: usize, handle: usize },
    /// The GL platform libraries are loaded and report no current context.
    None,
    /// Neither EGL nor GLX is loaded in this process, so nothing can be asked.
    Unknown,
}

/// The GL context current on this thread, as EGL or GLX see it.
pub(crate) fn current() -> Current {
    // The common case, before every map and unmap: one or two calls through queries found
    // earlier, and no `dlopen` (which, for a library that is not loaded, searches the disk).
    for (platform, p) in PLATFORMS.iter().enumerate() {
        if let Some(handle) = p.ask_found().filter(|&h| h != 0) {
            return Current::Context { platform, handle };
        }
    }
    let answers = PLATFORMS.each_ref().map(Platform::ask);
    if let Some((platform, handle)) = answers
        .iter()
        .enumerate()
        .find_map(|(i, a)| a.filter(|&h| h != 0).map(|h| (i, h)))
    {
        Current::Context { platform, handle }
    } else if answers.iter().any(Option::is_some) {
        Current::None
    } else {
        Current::Unknown
    }
}
