//! Error types of the [`egl`](crate::egl) module (feature `egl`).
//!
//! They live here, with [`Error`](super::Error), so that `Error::Egl` can hold an [`EglError`]
//! without the error types depending on the `egl` module; `cuda_gl::egl` re-exports them, and
//! converts khronos-egl's error codes into [`EglErrorCode`].

use std::fmt;

/// Where the EGL display of a [`HeadlessContext`](crate::egl::HeadlessContext) came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EglPlatform {
    /// `EGL_PLATFORM_DEVICE_EXT`: a display opened on one EGL device (a GPU, or Mesa's software
    /// device), through `eglGetPlatformDisplayEXT`.
    Device,
    /// `EGL_PLATFORM_SURFACELESS_MESA`: Mesa's surfaceless platform (llvmpipe, or whichever GPU
    /// Mesa picks), used by [`HeadlessContext::any_gl`](crate::egl::HeadlessContext::any_gl) when no
    /// NVIDIA device is available.
    MesaSurfaceless,
}

impl fmt::Display for EglPlatform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Device => "EGL_PLATFORM_DEVICE_EXT",
            Self::MesaSurfaceless => "EGL_PLATFORM_SURFACELESS_MESA",
        })
    }
}

/// A raw EGL error code, as returned by `eglGetError`, with its symbolic name.
///
/// The value `0` means that no code could be obtained (libEGL did not hand out `eglGetError`
/// through `eglGetProcAddress`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EglErrorCode(pub i32);

impl EglErrorCode {
    /// The symbolic name of the code, such as `"EGL_BAD_MATCH"`.
    ///
    /// Codes that this module does not know are named `"unknown EGL error"`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self.0 {
            0 => "EGL error code unavailable",
            0x3000 => "EGL_SUCCESS",
            0x3001 => "EGL_NOT_INITIALIZED",
            0x3002 => "EGL_BAD_ACCESS",
            0x3003 => "EGL_BAD_ALLOC",
            0x3004 => "EGL_BAD_ATTRIBUTE",
            0x3005 => "EGL_BAD_CONFIG",
            0x3006 => "EGL_BAD_CONTEXT",
            0x3007 => "EGL_BAD_CURRENT_SURFACE",
            0x3008 => "EGL_BAD_DISPLAY",
            0x3009 => "EGL_BAD_MATCH",
            0x300A => "EGL_BAD_NATIVE_PIXMAP",
            0x300B => "EGL_BAD_NATIVE_WINDOW",
            0x300C => "EGL_BAD_PARAMETER",
            0x300D => "EGL_BAD_SURFACE",
            0x300E => "EGL_CONTEXT_LOST",
            0x321B => "EGL_BAD_STREAM_KHR",
            0x321C => "EGL_BAD_STATE_KHR",
            0x322B => "EGL_BAD_DEVICE_EXT",
            0x322D => "EGL_BAD_OUTPUT_LAYER_EXT",
            0x322E => "EGL_BAD_OUTPUT_PORT_EXT",
            _ => "unknown EGL error",
        }
    }
}

impl fmt::Display for EglErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (0x{:04X})", self.name(), self.0)
    }
}

/// What EGL reports about one of its devices (`eglQueryDevicesEXT`), as listed in
/// [`EglError::NoMatchingDevice`] and returned by [`list_devices`](crate::egl::list_devices).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EglDeviceInfo {
    /// Position in the `eglQueryDevicesEXT` list. Only meaningful within one process; the
    /// order is not stable and is never used to pick a device.
    pub index: usize,
    /// Whether the device advertises `EGL_NV_device_cuda` (only NVIDIA's EGL driver does).
    pub has_nv_device_cuda: bool,
    /// The `EGL_CUDA_DEVICE_NV` attribute: the `CUdevice` this EGL device is, if it has one.
    pub cuda_device: Option<i32>,
    /// `EGL_DRM_DEVICE_FILE_EXT` (for example `/dev/dri/card0`), if the device exposes it.
    pub drm_device_file: Option<String>,
    /// `EGL_DRM_RENDER_NODE_FILE_EXT` (for example `/dev/dri/renderD128`), if exposed.
    pub drm_render_node: Option<String>,
    /// `EGL_DRIVER_NAME_EXT` (`EGL_EXT_device_persistent_id`), if exposed.
    pub driver_name: Option<String>,
    /// Whether the device is Mesa's software rasteriser (`EGL_MESA_device_software`).
    pub is_software: bool,
    /// The device's extension string (`eglQueryDeviceStringEXT(EGL_EXTENSIONS)`).
    pub extensions: String,
}

impl fmt::Display for EglDeviceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}: ", self.index)?;
        match (self.has_nv_device_cuda, self.cuda_device) {
            (true, Some(id)) => write!(f, "EGL_NV_device_cuda, CUDA device {id}")?,
            (true, None) => f.write_str("EGL_NV_device_cuda, CUDA device unreadable")?,
            (false, _) => f.write_str("no EGL_NV_device_cuda")?,
        }
        if self.is_software {
            f.write_str(", Mesa software device")?;
        }
        if let Some(driver) = &self.driver_name {
            write!(f, ", driver {driver}")?;
        }
        if let Some(file) = &self.drm_device_file {
            write!(f, ", {file}")?;
        }
        if let Some(node) = &self.drm_render_node {
            write!(f, ", {node}")?;
        }
        Ok(())
    }
}

/// Everything that can go wrong while opening or using a headless EGL context.
///
/// The messages say what to do about the problem, not only what failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum EglError {
    /// libEGL could not be opened at run time, or it does not provide EGL 1.4.
    #[error(
        "could not load libEGL ({reason}); install libglvnd's libEGL.so.1 \
         (Debian/Ubuntu: apt-get install libegl1)"
    )]
    LibraryNotFound {
        /// What the dynamic loader said.
        reason: String,
    },

    /// libEGL lacks client extensions needed to enumerate devices and open device displays.
    #[error(
        "libEGL lacks the client extension(s) {} needed to open a headless display on an EGL \
         device (client extensions offered: {}); {}",
        .missing.join(", "),
        or_none(.available),
        missing_client_extensions_hint(.available)
    )]
    MissingClientExtensions {
        /// The extensions that are required but not advertised.
        missing: Vec<&'static str>,
        /// The full client extension string (`eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS)`).
        available: String,
    },

    /// An advertised extension's entry point could not be resolved.
    #[error(
        "libEGL advertises {extension} but eglGetProcAddress(\"{function}\") returned null; \
         the EGL installation is inconsistent (reinstall libegl1 and the GPU driver)"
    )]
    MissingEntryPoint {
        /// The extension that defines the function.
        extension: &'static str,
        /// The function that could not be found.
        function: &'static str,
    },

    /// `eglQueryDevicesEXT` failed.
    #[error("eglQueryDevicesEXT failed: {code}")]
    QueryDevices {
        /// `eglGetError` after the failure.
        code: EglErrorCode,
    },

    /// No EGL device reports the requested CUDA device.
    #[error("{}", no_matching_device_message(*.cuda_device, .devices))]
    NoMatchingDevice {
        /// The CUDA device that was asked for.
        cuda_device: i32,
        /// Every device that EGL enumerated.
        devices: Vec<EglDeviceInfo>,
    },

    /// `eglGetPlatformDisplayEXT` returned `EGL_NO_DISPLAY`.
    #[error("eglGetPlatformDisplayEXT({platform}) returned EGL_NO_DISPLAY: {code}")]
    GetDisplay {
        /// The platform that was asked for.
        platform: EglPlatform,
        /// `eglGetError` after the failure.
        code: EglErrorCode,
    },

    /// `eglInitialize` failed.
    #[error(
        "eglInitialize failed on the {platform} display: {code}; check that the driver's \
         device files (/dev/nvidia*, /dev/dri/*) are accessible"
    )]
    Initialize {
        /// The platform of the display.
        platform: EglPlatform,
        /// The error code.
        code: EglErrorCode,
    },

    /// `eglBindAPI(EGL_OPENGL_API)` failed: the driver offers OpenGL ES only.
    #[error("eglBindAPI(EGL_OPENGL_API) failed: {code}; this EGL driver offers no desktop OpenGL")]
    BindApi {
        /// The error code.
        code: EglErrorCode,
    },

    /// `eglChooseConfig` itself failed.
    #[error("eglChooseConfig failed: {code}")]
    ChooseConfig {
        /// The error code.
        code: EglErrorCode,
    },

    /// `eglChooseConfig` succeeded but no configuration matches.
    #[error(
        "no EGLConfig on this display matches {requested}; the driver cannot render desktop \
         OpenGL off-screen"
    )]
    NoMatchingConfig {
        /// The attributes that were requested, in words.
        requested: String,
    },

    /// `eglCreateContext` failed for every OpenGL version that was tried.
    #[error(
        "eglCreateContext failed for every requested OpenGL core version ({}); the driver is \
         too old for these versions",
        format_context_failures(.failures)
    )]
    CreateContext {
        /// Each `(major, minor)` version that was tried, with its error code.
        failures: Vec<((u8, u8), EglErrorCode)>,
    },

    /// `eglCreatePbufferSurface` failed (only used where surfaceless contexts are unavailable).
    #[error("eglCreatePbufferSurface(16x16) failed: {code}")]
    CreateSurface {
        /// The error code.
        code: EglErrorCode,
    },

    /// `eglMakeCurrent` failed.
    #[error("eglMakeCurrent failed: {code}; a context can be current on only one thread at a time")]
    MakeCurrent {
        /// The error code.
        code: EglErrorCode,
    },

    /// Another user of the process's shared EGL display (wgpu's GL backend when its last GL
    /// instance goes, glutin, the application) terminated it, and this context went with it
    /// (EGL destroys a display's contexts at `eglTerminate`). Once returned, every later call on
    /// the context returns it too, whatever EGL answers then (a context of the other library
    /// may get the dead one's handle value once the display is initialised again). cuda-gl
    /// never terminates a shared display itself; where libEGL offers
    /// `EGL_KHR_display_reference` its display is its own and this cannot happen
    /// ([`HeadlessContext::has_own_display`](crate::egl::HeadlessContext::has_own_display)).
    #[error(
        "{call}: EGL no longer knows this context ({code}): another user of the shared EGL \
         display terminated it, and its contexts with it.\nhelp: keep the other library's EGL \
         display (a wgpu instance with Backends::GL, a glutin display) alive until cuda-gl's \
         contexts are dropped, then make a new HeadlessContext; an EGL that offers \
         EGL_KHR_display_reference gives cuda-gl a display of its own"
    )]
    DisplayTerminated {
        /// The call that was refused, such as `HeadlessContext::make_current`.
        call: &'static str,
        /// What `eglQueryContext` answered when the context was first refused
        /// (`EGL_NOT_INITIALIZED` while the display is terminated, `EGL_BAD_CONTEXT` once it is
        /// initialised again).
        code: EglErrorCode,
    },

    /// [`HeadlessContext::any_gl`](crate::egl::HeadlessContext::any_gl) found no display that gives
    /// an OpenGL context.
    #[error(
        "no EGL display gave an OpenGL context; tried: {}. For software rendering install \
         Mesa's EGL driver (Debian/Ubuntu: apt-get install libegl-mesa0)",
        or_none(&.attempts.join("; "))
    )]
    NoUsableDisplay {
        /// One line per display that was tried, with why it failed.
        attempts: Vec<String>,
    },
}

impl EglError {
    /// Whether this error means that EGL on this machine cannot give what was asked (libEGL or
    /// its extensions missing, no EGL device for the CUDA device, no desktop OpenGL, no config,
    /// no context of the versions tried, no display at all), rather than a failure of a call
    /// that should work: `false` for [`EglError::ChooseConfig`], [`EglError::CreateSurface`],
    /// [`EglError::MakeCurrent`] (a context current on another thread) and
    /// [`EglError::DisplayTerminated`] (another library ended the display).
    ///
    /// [`Error::is_unsupported_setup`](crate::Error::is_unsupported_setup) answers this for
    /// `Error::Egl`.
    pub fn is_unsupported_setup(&self) -> bool {
        match self {
            EglError::LibraryNotFound { .. }
            | EglError::MissingClientExtensions { .. }
            | EglError::MissingEntryPoint { .. }
            | EglError::QueryDevices { .. }
            | EglError::NoMatchingDevice { .. }
            | EglError::GetDisplay { .. }
            | EglError::Initialize { .. }
            | EglError::BindApi { .. }
            | EglError::NoMatchingConfig { .. }
            | EglError::CreateContext { .. }
            | EglError::NoUsableDisplay { .. } => true,
            EglError::ChooseConfig { .. }
            | EglError::CreateSurface { .. }
            | EglError::MakeCurrent { .. }
            | EglError::DisplayTerminated { .. } => false,
        }
    }
}

fn or_none(s: &str) -> &str {
    if s.trim().is_empty() { "none" } else { s }
}

fn missing_client_extensions_hint(available: &str) -> &'static str {
    if available.trim().is_empty() {
        "libglvnd found no EGL vendor library at all: install the driver's EGL part (Mesa: \
         apt-get install libegl-mesa0; NVIDIA: the driver's libEGL_nvidia.so.0) or set \
         __EGL_VENDOR_LIBRARY_FILENAMES=/usr/share/glvnd/egl_vendor.d/10_nvidia.json (or where \
         your driver installed it)"
    } else {
        "use libglvnd's libEGL.so.1 (Debian/Ubuntu: apt-get install libegl1) with a driver that \
         supports EGL devices"
    }
}

fn format_context_failures(failures: &[((u8, u8), EglErrorCode)]) -> String {
    if failures.is_empty() {
        return "no version tried".to_owned();
    }
    failures
        .iter()
        .map(|((major, minor), code)| format!("{major}.{minor}: {code}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn no_matching_device_message(cuda_device: i32, devices: &[EglDeviceInfo]) -> String {
    use fmt::Write as _;

    let mut msg = format!("no EGL device is CUDA device {cuda_device}; ");
    if devices.is_empty() {
        msg.push_str("EGL enumerated no devices at all");
    } else {
        msg.push_str("EGL devices seen: ");
        let list: Vec<String> = devices.iter().map(ToString::to_string).collect();
        msg.push_str(&list.join("; "));
    }
    if devices.iter().any(|d| d.has_nv_device_cuda) {
        let ids: Vec<String> = devices
            .iter()
            .filter_map(|d| d.cuda_device)
            .map(|id| id.to_string())
            .collect();
        let _ = write!(
            msg,
            ". EGL knows CUDA devices [{}]; pass the CUdevice that cuDeviceGet returned for the \
             GPU you use (GPUs hidden by CUDA_VISIBLE_DEVICES have no CUDA id)",
            ids.join(", ")
        );
    } else {
        msg.push_str(
            ". No device has EGL_NV_device_cuda, so no NVIDIA EGL vendor library was found — set \
             __EGL_VENDOR_LIBRARY_FILENAMES=/usr/share/glvnd/egl_vendor.d/10_nvidia.json (or \
             where your driver installed it, e.g. \
             /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json); in a container also \
             set NVIDIA_DRIVER_CAPABILITIES to include `graphics`",
        );
    }
    msg
}
