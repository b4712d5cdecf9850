//! The EGL display of cuda-gl's contexts and how long it stays initialised.
//!
//! `eglGetPlatformDisplay` gives every caller in the process the same `EGLDisplay` for the same
//! platform, native display and attributes, and a plain `eglTerminate` ends it for all of them at
//! once (with every context and surface of it not current somewhere). wgpu-hal's GL backend,
//! glutin and the application each keep their own count of such a display, so cuda-gl must
//! neither terminate a display that another library may use, nor use its handles after another
//! library terminated it:
//!
//! - where libEGL offers `EGL_KHR_display_reference`, cuda-gl asks for a display with
//!   `EGL_TRACK_REFERENCES_KHR`: a display of its own (the extension returns a separate
//!   `EGLDisplay` for a different value of that attribute), counted by EGL, so each
//!   [`DisplayRef`] initialises it once and terminates it once, and no other library's
//!   `eglTerminate` reaches it. glutin asks for the same attribute, and so gets the same display
//!   for the same device: its `eglTerminate` then gives back its own reference only;
//! - elsewhere (Mesa 22.3, for one) the display is shared and cuda-gl never terminates it: it
//!   stays initialised until the process exits, as glutin also leaves it. What that keeps is the
//!   driver's per-display state (one per EGL device or platform cuda-gl used, not per context);
//!   contexts and surfaces are still destroyed when their `HeadlessContext` drops. Another
//!   library's `eglTerminate` still ends cuda-gl's contexts there; [`DisplayRef::check_context`]
//!   notices it before cuda-gl uses their handles, unless that library has initialised the
//!   display again and EGL gave one of its new contexts the dead context's handle value
//!   (NVIDIA's EGL reuses them): a `HeadlessContext` once refused stays refused, but one not
//!   asked in between cannot be told from that context.

use std::ffi::c_void;

use khronos_egl as kegl;

use super::error::{EglError, EglErrorCode, EglPlatform};
use super::sys::{self, Egl, GetPlatformDisplayFn};

/// `EGL_TRACK_REFERENCES_KHR` (`EGL_KHR_display_reference`).
const TRACK_REFERENCES_KHR: kegl::Int = 0x3352;
/// `EGL_CONFIG_ID`, asked of a context only to learn whether EGL still knows it.
const CONFIG_ID: kegl::Int = 0x3028;

type QueryDisplayAttribFn =
    unsafe extern "system" fn(kegl::EGLDisplay, kegl::Int, *mut kegl::Attrib) -> kegl::Boolean;

/// An initialised EGL display held by one of cuda-gl's contexts.
///
/// A reference-counted display ([`tracked`](Self::tracked)) is terminated once per
/// `DisplayRef`, which EGL counts; a shared one is never terminated (see the module docs).
pub(super) struct DisplayRef {
    egl: &'static Egl,
    display: kegl::Display,
    version: (i32, i32),
    tracked: bool,
}

impl DisplayRef {
    /// The display of `platform` for `native` (an `EGLDeviceEXT`, or `EGL_DEFAULT_DISPLAY` for
    /// Mesa's surfaceless platform), initialised: a reference-counted one of cuda-gl's own where
    /// libEGL offers it, else the display that every user in the process shares.
    ///
    /// # Safety
    /// 1. `native` is what `platform` requires: an `EGLDeviceEXT` from `eglQueryDevicesEXT` for
    ///    [`EglPlatform::Device`], `EGL_DEFAULT_DISPLAY` for [`EglPlatform::MesaSurfaceless`].
    pub(super) unsafe fn open(
        egl: &'static Egl,
        get_platform_display: GetPlatformDisplayFn,
        platform: EglPlatform,
        native: *mut c_void,
    ) -> Result<Self, EglError> {
        if sys::has_extension(&sys::client_extensions(egl), "EGL_KHR_display_reference") {
            let attribs = [TRACK_REFERENCES_KHR, kegl::TRUE as kegl::Int, kegl::NONE];
            // libglvnd offers a client extension when any vendor library has it, and the
            // extension lets an implementation refuse the attribute (EGL_BAD_ATTRIBUTE): then
            // the shared display, as glutin does.
            // SAFETY: (1); the list is EGL_NONE-terminated.
            let tracked =
                unsafe { get_display(egl, get_platform_display, platform, native, &attribs) }
                    .and_then(|display| Self::initialize(egl, display, platform));
            match tracked {
                Ok(display) => return Ok(display),
                Err(e) => log::debug!(
                    "cuda-gl: no reference-counted EGL display ({e}); using the shared one, \
                     which stays initialised until the process exits"
                ),
            }
        }
        // SAFETY: (1); the list is EGL_NONE-terminated.
        let display =
            unsafe { get_display(egl, get_platform_display, platform, native, &[kegl::NONE]) }?;
        Self::initialize(egl, display, platform)
    }

    /// `eglInitialize`s `display` and asks EGL whether it counts references.
    fn initialize(
        egl: &'static Egl,
        display: kegl::Display,
        platform: EglPlatform,
    ) -> Result<Self, EglError> {
        let version = egl.initialize(display).map_err(|e| EglError::Initialize {
            platform,
            code: EglErrorCode::from_egl(e),
        })?;
        Ok(Self {
            egl,
            display,
            version,
            // A display that does not say it counts is treated as shared: never terminated.
            tracked: tracks_references(egl, display),
        })
    }

    /// Another hold on the same display (for a context that shares objects with this one's):
    /// one more `eglInitialize`, which a reference-counted display counts.
    pub(super) fn share(&self, platform: EglPlatform) -> Result<Self, EglError> {
        let version = self
            .egl
            .initialize(self.display)
            .map_err(|e| EglError::Initialize {
                platform,
                code: EglErrorCode::from_egl(e),
            })?;
        Ok(Self {
            egl: self.egl,
            display: self.display,
            version,
            tracked: self.tracked,
        })
    }

    /// Refuses `call` when EGL no longer knows `context`, a context made on this display:
    /// another user of a shared display terminated it (`EGL_NOT_INITIALIZED`), perhaps then
    /// initialised it again (`EGL_BAD_CONTEXT`), and the context went with it.
    ///
    /// # Errors
    /// [`EglError::DisplayTerminated`] naming `call`, with the code of `eglQueryContext`.
    pub(super) fn check_context(
        &self,
        context: kegl::Context,
        call: &'static str,
    ) -> Result<(), EglError> {
        match self.egl.query_context(self.display, context, CONFIG_ID) {
            Ok(_) => Ok(()),
            Err(e) => Err(EglError::DisplayTerminated {
                call,
                code: EglErrorCode::from_egl(e),
            }),
        }
    }

    pub(super) fn display(&self) -> kegl::Display {
        self.display
    }

    pub(super) fn version(&self) -> (i32, i32) {
        self.version
    }

    /// Whether EGL counts this display's references (`EGL_KHR_display_reference`): a display of
    /// cuda-gl's own, which no other library's `eglTerminate` reaches.
    pub(super) fn tracked(&self) -> bool {
        self.tracked
    }
}

impl Drop for DisplayRef {
    fn drop(&mut self) {
        // A shared display stays initialised: terminating it would end every other library's
        // contexts on it.
        if self.tracked
            && let Err(e) = self.egl.terminate(self.display)
        {
            log::warn!(
                "eglTerminate({:#x}) failed: {}",
                self.display.as_ptr() as usize,
                EglErrorCode::from_egl(e)
            );
        }
    }
}

/// `eglGetPlatformDisplayEXT(platform, native, attribs)`.
///
/// # Safety
/// 1. As [`DisplayRef::open`]'s (1); `attribs` ends with `EGL_NONE`.
unsafe fn get_display(
    egl: &Egl,
    get_platform_display: GetPlatformDisplayFn,
    platform: EglPlatform,
    native: *mut c_void,
    attribs: &[kegl::Int],
) -> Result<kegl::Display, EglError> {
    let platform_enum = match platform {
        EglPlatform::Device => sys::PLATFORM_DEVICE_EXT,
        EglPlatform::MesaSurfaceless => sys::PLATFORM_SURFACELESS_MESA,
    };
    // SAFETY: (1).
    let display = unsafe { get_platform_display(platform_enum, native, attribs.as_ptr()) };
    if display.is_null() {
        return Err(EglError::GetDisplay {
            platform,
            code: sys::last_error(egl),
        });
    }
    // SAFETY: a non-null EGLDisplay returned by eglGetPlatformDisplayEXT.
    Ok(unsafe { kegl::Display::from_ptr(display) })
}

/// Whether initialised `display` reports `EGL_TRACK_REFERENCES_KHR` true
/// (`eglQueryDisplayAttribKHR`, or its equivalent `eglQueryDisplayAttribEXT`); `false` when it
/// cannot be asked.
fn tracks_references(egl: &Egl, display: kegl::Display) -> bool {
    let Some(f) = sys::proc_address(egl, "eglQueryDisplayAttribKHR")
        .or_else(|| sys::proc_address(egl, "eglQueryDisplayAttribEXT"))
    else {
        return false;
    };
    // SAFETY: both names have the prototype
    // `EGLBoolean (EGLDisplay, EGLint, EGLAttrib *)` (EGL_KHR_display_reference,
    // EGL_EXT_device_query), which `QueryDisplayAttribFn` is.
    let query: QueryDisplayAttribFn = unsafe { std::mem::transmute(f) };
    let mut value: kegl::Attrib = 0;
    // SAFETY: an initialised display; a valid out-pointer.
    let ok = unsafe { query(display.as_ptr(), TRACK_REFERENCES_KHR, &raw mut value) };
    if ok != kegl::TRUE {
        // An implementation without the attribute answers EGL_BAD_ATTRIBUTE: cleared, so that
        // it does not show in a later diagnostic.
        let _ = sys::last_error(egl);
        return false;
    }
    value == kegl::TRUE as kegl::Attrib
}
