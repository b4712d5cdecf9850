//! libEGL loading, extension entry points and device enumeration.

use std::ffi::{CStr, c_char, c_void};
use std::ptr;
use std::sync::OnceLock;

use khronos_egl as kegl;

use super::error::{EglDeviceInfo, EglError, EglErrorCode};

/// The libEGL instance type: EGL 1.4 entry points, resolved at run time.
pub(super) type Egl = kegl::DynamicInstance<kegl::EGL1_4>;

pub(super) const PLATFORM_DEVICE_EXT: kegl::Enum = 0x313F;
pub(super) const PLATFORM_SURFACELESS_MESA: kegl::Enum = 0x31DD;
const CUDA_DEVICE_NV: kegl::Int = 0x323A;
const DRM_DEVICE_FILE_EXT: kegl::Int = 0x3233;
const DRM_RENDER_NODE_FILE_EXT: kegl::Int = 0x3377;
const DRIVER_NAME_EXT: kegl::Int = 0x335E;

pub(super) const CONTEXT_MAJOR_VERSION: kegl::Int = 0x3098;
pub(super) const CONTEXT_MINOR_VERSION: kegl::Int = 0x30FB;
pub(super) const CONTEXT_FLAGS_KHR: kegl::Int = 0x30FC;
pub(super) const CONTEXT_OPENGL_DEBUG_BIT_KHR: kegl::Int = 0x1;
/// `EGL_CONTEXT_OPENGL_NO_ERROR_KHR` (`EGL_KHR_create_context_no_error`): asked for by tests
/// only, to check that cuda-gl refuses such a context.
#[cfg(test)]
pub(super) const CONTEXT_OPENGL_NO_ERROR_KHR: kegl::Int = 0x31B3;
pub(super) const CONTEXT_OPENGL_PROFILE_MASK: kegl::Int = 0x30FD;
pub(super) const CONTEXT_OPENGL_CORE_PROFILE_BIT: kegl::Int = 0x1;
pub(super) const CONTEXT_OPENGL_COMPATIBILITY_PROFILE_BIT: kegl::Int = 0x2;

type EglDevice = *mut c_void;
type QueryDevicesFn =
    unsafe extern "system" fn(kegl::Int, *mut EglDevice, *mut kegl::Int) -> kegl::Boolean;
type QueryDeviceAttribFn =
    unsafe extern "system" fn(EglDevice, kegl::Int, *mut kegl::Attrib) -> kegl::Boolean;
type QueryDeviceStringFn = unsafe extern "system" fn(EglDevice, kegl::Int) -> *const c_char;
pub(super) type GetPlatformDisplayFn =
    unsafe extern "system" fn(kegl::Enum, *mut c_void, *const kegl::Int) -> kegl::EGLDisplay;
type GetErrorFn = unsafe extern "system" fn() -> kegl::Int;

/// libEGL, opened once per process (khronos-egl opens it with `RTLD_NODELETE`).
static EGL: OnceLock<Result<Egl, String>> = OnceLock::new();

/// Opens libEGL (once per process) and returns it.
pub(super) fn egl() -> Result<&'static Egl, EglError> {
    let loaded = EGL.get_or_init(|| {
        // SAFETY: this runs libEGL's initialisers and resolves the EGL 1.4 symbols by name;
        // libEGL.so.1 is the Khronos-specified EGL library, whose exported symbols have the
        // signatures khronos-egl declares.
        unsafe { Egl::load_required_from_filename("libEGL.so.1") }.or_else(|first| {
            // SAFETY: as above, for the unversioned development symlink.
            unsafe { Egl::load_required_from_filename("libEGL.so") }
                .map_err(|_| format!("libEGL.so.1: {first}"))
        })
    });
    match loaded {
        Ok(egl) => Ok(egl),
        Err(reason) => Err(EglError::LibraryNotFound {
            reason: reason.clone(),
        }),
    }
}

/// Whether the space-separated extension list `list` contains `name` exactly.
pub(super) fn has_extension(list: &str, name: &str) -> bool {
    list.split_ascii_whitespace().any(|e| e == name)
}

/// `eglGetProcAddress` that never panics (khronos-egl unwraps `CString::new`).
pub(super) fn proc_address(egl: &Egl, name: &str) -> Option<extern "system" fn()> {
    if name.as_bytes().contains(&0) {
        return None;
    }
    egl.get_proc_address(name)
}

/// The EGL error of the last failed call on this thread, read through a raw `eglGetError`
/// pointer so that extension error codes (which khronos-egl cannot represent) survive.
pub(super) fn last_error(egl: &Egl) -> EglErrorCode {
    match proc_address(egl, "eglGetError") {
        Some(f) => {
            // SAFETY: `eglGetError` has the signature `EGLint eglGetError(void)` (EGL 1.0).
            let get_error: GetErrorFn = unsafe { std::mem::transmute(f) };
            // SAFETY: eglGetError takes no arguments and may be called at any time.
            EglErrorCode(unsafe { get_error() })
        }
        None => EglErrorCode(0),
    }
}

/// The client extension string (empty when `EGL_EXT_client_extensions` is unsupported).
pub(super) fn client_extensions(egl: &Egl) -> String {
    match egl.query_string(None, kegl::EXTENSIONS) {
        Ok(s) => s.to_string_lossy().into_owned(),
        Err(_) => String::new(),
    }
}

/// Resolves `name` and reinterprets it as the function pointer type `F`.
///
/// # Safety
///
/// `F` must be an `unsafe extern "system" fn` type matching the C prototype of `name`.
unsafe fn load_fn<F: Copy>(
    egl: &Egl,
    extension: &'static str,
    name: &'static str,
) -> Result<F, EglError> {
    const {
        assert!(size_of::<F>() == size_of::<extern "system" fn()>());
    }
    match proc_address(egl, name) {
        // SAFETY: both are function pointers of the same size (checked above), and the caller
        // guarantees that `F` is the prototype of `name`.
        Some(f) => Ok(unsafe { std::mem::transmute_copy::<extern "system" fn(), F>(&f) }),
        None => Err(EglError::MissingEntryPoint {
            extension,
            function: name,
        }),
    }
}

/// The `EGL_EXT_device_*` and `EGL_EXT_platform_base` entry points.
pub(super) struct DeviceApi {
    egl: &'static Egl,
    query_devices: QueryDevicesFn,
    query_device_attrib: QueryDeviceAttribFn,
    query_device_string: QueryDeviceStringFn,
    get_platform_display: GetPlatformDisplayFn,
}

/// One enumerated device: its handle and what it reports.
pub(super) struct Device {
    pub(super) handle: EglDevice,
    pub(super) info: EglDeviceInfo,
}

impl DeviceApi {
    /// Checks the client extensions for device enumeration and the device platform and loads
    /// their entry points.
    pub(super) fn load(egl: &'static Egl, client_exts: &str) -> Result<Self, EglError> {
        let has = |e| has_extension(client_exts, e);
        let base = has("EGL_EXT_device_base");
        let mut missing = Vec::new();
        if !base && !has("EGL_EXT_device_enumeration") {
            missing.push("EGL_EXT_device_enumeration");
        }
        if !base && !has("EGL_EXT_device_query") {
            missing.push("EGL_EXT_device_query");
        }
        if !has("EGL_EXT_platform_base") {
            missing.push("EGL_EXT_platform_base");
        }
        if !has("EGL_EXT_platform_device") {
            missing.push("EGL_EXT_platform_device");
        }
        if !missing.is_empty() {
            return Err(EglError::MissingClientExtensions {
                missing,
                available: client_exts.to_owned(),
            });
        }
        Ok(Self {
            egl,
            // SAFETY: prototypes from the EGL_EXT_device_enumeration spec.
            query_devices: unsafe {
                load_fn(egl, "EGL_EXT_device_enumeration", "eglQueryDevicesEXT")
            }?,
            // SAFETY: prototypes from the EGL_EXT_device_query spec.
            query_device_attrib: unsafe {
                load_fn(egl, "EGL_EXT_device_query", "eglQueryDeviceAttribEXT")
            }?,
            // SAFETY: prototypes from the EGL_EXT_device_query spec.
            query_device_string: unsafe {
                load_fn(egl, "EGL_EXT_device_query", "eglQueryDeviceStringEXT")
            }?,
            get_platform_display: Self::load_get_platform_display(egl)?,
        })
    }

    /// Loads only `eglGetPlatformDisplayEXT` (for the Mesa surfaceless platform).
    pub(super) fn load_get_platform_display(
        egl: &'static Egl,
    ) -> Result<GetPlatformDisplayFn, EglError> {
        // SAFETY: prototype from the EGL_EXT_platform_base spec.
        unsafe { load_fn(egl, "EGL_EXT_platform_base", "eglGetPlatformDisplayEXT") }
    }

    /// Every EGL device, with what it reports.
    pub(super) fn devices(&self) -> Result<Vec<Device>, EglError> {
        let mut count: kegl::Int = 0;
        // SAFETY: a null device array with max_devices 0 only asks for the count, written to
        // the valid out-pointer `count`.
        let ok = unsafe { (self.query_devices)(0, ptr::null_mut(), &raw mut count) };
        if ok != kegl::TRUE {
            return Err(EglError::QueryDevices {
                code: last_error(self.egl),
            });
        }
        let capacity = usize::try_from(count).unwrap_or(0);
        let mut handles: Vec<EglDevice> = vec![ptr::null_mut(); capacity];
        let mut got: kegl::Int = 0;
        if capacity > 0 {
            // SAFETY: `handles` has room for `count` devices; `got` is a valid out-pointer.
            let ok = unsafe { (self.query_devices)(count, handles.as_mut_ptr(), &raw mut got) };
            if ok != kegl::TRUE {
                return Err(EglError::QueryDevices {
                    code: last_error(self.egl),
                });
            }
        }
        handles.truncate(usize::try_from(got).unwrap_or(0).min(capacity));
        Ok(handles
            .into_iter()
            .enumerate()
            .map(|(index, handle)| Device {
                handle,
                info: self.device_info(index, handle),
            })
            .collect())
    }

    fn device_string(&self, device: EglDevice, name: kegl::Int) -> Option<String> {
        // SAFETY: `device` came from eglQueryDevicesEXT; the result is null or a NUL-terminated
        // string owned by EGL that lives as long as the device (the whole process).
        let s = unsafe { (self.query_device_string)(device, name) };
        if s.is_null() {
            // Clear the error so that it does not leak into later diagnostics.
            let _ = last_error(self.egl);
            None
        } else {
            // SAFETY: non-null, NUL-terminated, valid for the duration of this call.
            Some(unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned())
        }
    }

    fn device_info(&self, index: usize, device: EglDevice) -> EglDeviceInfo {
        let extensions = self
            .device_string(device, kegl::EXTENSIONS)
            .unwrap_or_default();
        let has = |e| has_extension(&extensions, e);
        let has_nv_device_cuda = has("EGL_NV_device_cuda");
        let cuda_device = if has_nv_device_cuda {
            let mut value: kegl::Attrib = 0;
            // SAFETY: `device` came from eglQueryDevicesEXT and `value` is a valid out-pointer.
            let ok = unsafe { (self.query_device_attrib)(device, CUDA_DEVICE_NV, &raw mut value) };
            if ok == kegl::TRUE {
                // EGLAttrib is intptr_t; the CUdevice handle is a small int stored in it.
                i32::try_from(value).ok()
            } else {
                let _ = last_error(self.egl);
                None
            }
        } else {
            None
        };
        // A string query whose name an extension defines: asked only when the device has it.
        let string_of = |extension, name| {
            if has(extension) {
                self.device_string(device, name)
            } else {
                None
            }
        };
        let drm_device_file = string_of("EGL_EXT_device_drm", DRM_DEVICE_FILE_EXT);
        let drm_render_node = string_of("EGL_EXT_device_drm_render_node", DRM_RENDER_NODE_FILE_EXT);
        let driver_name = string_of("EGL_EXT_device_persistent_id", DRIVER_NAME_EXT);
        EglDeviceInfo {
            index,
            has_nv_device_cuda,
            cuda_device,
            drm_device_file,
            drm_render_node,
            driver_name,
            is_software: has("EGL_MESA_device_software"),
            extensions,
        }
    }

    /// `eglGetPlatformDisplayEXT`, to open a device's display with.
    pub(super) fn get_platform_display(&self) -> GetPlatformDisplayFn {
        self.get_platform_display
    }
}
