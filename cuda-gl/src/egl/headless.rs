//! [`HeadlessContext`]: constructors, accessors and `Drop`.

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;

use khronos_egl as kegl;

use super::HeadlessConfig;
use super::display::DisplayRef;
use super::error::{EglDeviceInfo, EglError, EglErrorCode, EglPlatform};
use super::sys::{self, Device, DeviceApi, Egl};

/// A headless OpenGL context, current on the thread that created it; no window, no X server.
///
/// Dropping it releases it from this thread (if current) and destroys its surface and context.
/// Its EGL display is terminated only where it is cuda-gl's own
/// ([`has_own_display`](Self::has_own_display)); a display shared with other users in the
/// process stays initialised until the process exits. Failures while dropping are logged with
/// [`log::warn!`], never panicked on.
///
/// The type is `Send` but not `Sync`: an EGL context may be current on one thread at a time, and
/// the OpenGL calls made through the [`gl`] crate go to whatever context is current on the
/// calling thread. To hand a context to another thread, call [`HeadlessContext::release_current`]
/// on the old thread, move it, and call [`HeadlessContext::make_current`] on the new one (this is
/// how resources registered in it are dropped on another thread: their GL context must be current
/// there). Threads that each need OpenGL at the same time create one context each.
///
/// It must outlive every registration made while it was current: unmapping and unregistering
/// need it current. `let _ = HeadlessContext::...` drops it at once (`_` is not a binding), and
/// so does a bare `HeadlessContext::...?;` statement (which `#[must_use]` warns about): keep it
/// in a named variable such as `_gl` declared before the registrations, so it drops after them.
#[must_use = "dropping a HeadlessContext destroys the GL context and every GL object in it; \
              keep it in a named variable such as `_gl`"]
pub struct HeadlessContext {
    pub(super) egl: &'static Egl,
    pub(super) context: kegl::Context,
    pub(super) surface: Option<kegl::Surface>,
    pub(super) platform: EglPlatform,
    pub(super) device: Option<EglDeviceInfo>,
    pub(super) egl_extensions: String,
    pub(super) gl_request: (u8, u8),
    /// The options it was made with, for [`new_shared`](Self::new_shared).
    pub(super) config: HeadlessConfig,
    pub(super) renderer: String,
    pub(super) vendor: String,
    pub(super) version: String,
    /// Why [`for_cuda_device_or_any`](Self::for_cuda_device_or_any) fell back to any GL.
    pub(super) fallback: Option<Box<EglError>>,
    /// Dropped after `Drop::drop` destroyed the context: terminates a display of cuda-gl's own
    /// once per context (EGL counts them), never a shared one.
    pub(super) display: DisplayRef,
    /// What `eglQueryContext` answered when it first refused this context (another user of a
    /// shared display terminated it): refused for good from then on (see `current.rs`).
    pub(super) terminated: std::cell::Cell<Option<EglErrorCode>>,
    pub(super) _not_sync: PhantomData<std::cell::Cell<()>>,
}

// SAFETY: the EGL handles are process-wide; EGL lets a context be made current on any thread
// once it is released from the previous one, which `make_current` reports as an error otherwise
// (EGL_BAD_ACCESS). Drop only releases the context if it is current on the dropping thread, and
// eglDestroyContext on a context still current elsewhere is deferred by EGL, not undefined.
// `!Sync` (the Cell marker) keeps two threads from using one context at once.
unsafe impl Send for HeadlessContext {}

impl fmt::Debug for HeadlessContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HeadlessContext")
            .field("platform", &self.platform)
            .field("display", &self.display.display().as_ptr())
            .field("context", &self.context.as_ptr())
            .field("surfaceless", &self.surface.is_none())
            .field("cuda_device", &self.cuda_device())
            .field("gl_request", &self.gl_request)
            .field("renderer", &self.renderer)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

impl HeadlessContext {
    /// Opens an OpenGL 4.5 core context (3.3 if 4.5 is refused) on the EGL device that is CUDA
    /// device `device`, and makes it current on this thread.
    ///
    /// The device is picked by its `EGL_CUDA_DEVICE_NV` attribute, never by enumeration order.
    ///
    /// Keep the returned context alive for as long as anything registered in it:
    /// `let _ = HeadlessContext::for_cuda_device(&d)?;` destroys it at once (bind it to a name
    /// such as `_gl`, not `_`). Registrations check that their GL context is current, and refuse
    /// with [`Error::NoGlContext`](crate::Error::NoGlContext) once it is gone.
    ///
    /// # Errors
    ///
    /// - [`EglError::LibraryNotFound`]: libEGL is not installed.
    /// - [`EglError::MissingClientExtensions`], [`EglError::MissingEntryPoint`],
    ///   [`EglError::QueryDevices`]: EGL cannot enumerate devices.
    /// - [`EglError::NoMatchingDevice`]: no device has that CUDA id; its message lists the
    ///   devices seen and explains how to make NVIDIA's EGL driver visible.
    /// - [`EglError::GetDisplay`], [`EglError::Initialize`], [`EglError::BindApi`],
    ///   [`EglError::ChooseConfig`], [`EglError::NoMatchingConfig`],
    ///   [`EglError::CreateContext`], [`EglError::CreateSurface`], [`EglError::MakeCurrent`]:
    ///   the matching EGL call failed (with its EGL error code).
    pub fn for_cuda_device(device: &crate::device::Device) -> Result<Self, EglError> {
        Self::for_cuda_device_with(device, &HeadlessConfig::default())
    }

    /// [`for_cuda_device`](Self::for_cuda_device) with explicit [`HeadlessConfig`] options.
    ///
    /// # Errors
    ///
    /// As [`for_cuda_device`](Self::for_cuda_device); [`EglError::CreateContext`] lists every
    /// version of [`HeadlessConfig::gl_versions`] that was refused.
    pub fn for_cuda_device_with(
        device: &crate::device::Device,
        config: &HeadlessConfig,
    ) -> Result<Self, EglError> {
        Self::for_cuda_ordinal_with(device.raw(), config)
    }

    /// [`for_cuda_device`](Self::for_cuda_device) for a raw `CUdevice` handle (what
    /// `cuDeviceGet(ordinal)` returns, in practice the ordinal; e.g. cudarc's
    /// `CudaContext::cu_device()`). Unlike [`Device::get`](crate::Device::get) it does not
    /// load the CUDA driver.
    ///
    /// # Errors
    ///
    /// As [`for_cuda_device`](Self::for_cuda_device).
    pub fn for_cuda_ordinal(cuda_device: i32) -> Result<Self, EglError> {
        Self::for_cuda_ordinal_with(cuda_device, &HeadlessConfig::default())
    }

    /// [`for_cuda_ordinal`](Self::for_cuda_ordinal) with explicit [`HeadlessConfig`] options.
    ///
    /// # Errors
    ///
    /// As [`for_cuda_device_with`](Self::for_cuda_device_with).
    pub fn for_cuda_ordinal_with(
        cuda_device: i32,
        config: &HeadlessConfig,
    ) -> Result<Self, EglError> {
        let egl = sys::egl()?;
        let api = DeviceApi::load(egl, &sys::client_extensions(egl))?;
        let mut devices = api.devices()?;
        let Some(pos) = devices
            .iter()
            .position(|d| d.info.cuda_device == Some(cuda_device))
        else {
            return Err(EglError::NoMatchingDevice {
                cuda_device,
                devices: devices.into_iter().map(|d| d.info).collect(),
            });
        };
        Self::on_device(egl, &api, devices.swap_remove(pos), config)
    }

    /// A context on EGL device `device`'s display, made current.
    fn on_device(
        egl: &'static Egl,
        api: &DeviceApi,
        device: Device,
        config: &HeadlessConfig,
    ) -> Result<Self, EglError> {
        // SAFETY: the handle came from eglQueryDevicesEXT, as the device platform requires.
        let display = unsafe {
            DisplayRef::open(
                egl,
                api.get_platform_display(),
                EglPlatform::Device,
                device.handle,
            )
        }?;
        Self::create(
            egl,
            display,
            EglPlatform::Device,
            Some(device.info),
            config,
            None,
        )
    }

    /// A context on the GPU of CUDA device `device` where its GL runs there
    /// ([`for_cuda_device`](Self::for_cuda_device)), else any GL there is
    /// ([`any_gl`](Self::any_gl): a display target then runs staged), made current on this
    /// thread; [`fallback_reason`](Self::fallback_reason) says why the CUDA GPU was not used.
    /// The set-up of a program that shows CUDA frames wherever it runs.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), cuda_gl::Error> {
    /// use cuda_gl::egl::HeadlessContext;
    /// let device = cuda_gl::Device::get(0)?;
    /// let gl = HeadlessContext::for_cuda_device_or_any(&device)?;
    /// if let Some(why) = gl.fallback_reason() {
    ///     println!("GL is not on CUDA device 0 ({why}): {}", gl.renderer());
    /// }
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// [`EglError::LibraryNotFound`] if libEGL is not installed; otherwise
    /// [`EglError::NoUsableDisplay`], whose first line is why the CUDA GPU failed.
    pub fn for_cuda_device_or_any(device: &crate::device::Device) -> Result<Self, EglError> {
        Self::for_cuda_device_or_any_with(device, &HeadlessConfig::default())
    }

    /// [`for_cuda_device_or_any`](Self::for_cuda_device_or_any) with explicit
    /// [`HeadlessConfig`] options (used for both tries).
    ///
    /// # Errors
    ///
    /// As [`for_cuda_device_or_any`](Self::for_cuda_device_or_any).
    pub fn for_cuda_device_or_any_with(
        device: &crate::device::Device,
        config: &HeadlessConfig,
    ) -> Result<Self, EglError> {
        let on_cuda = match Self::for_cuda_device_with(device, config) {
            Ok(ctx) => return Ok(ctx),
            Err(e) => e,
        };
        log::info!("cuda-gl: no GL on CUDA device {}: {on_cuda}", device.raw());
        match Self::any_gl_with(config) {
            Ok(mut ctx) => {
                ctx.fallback = Some(Box::new(on_cuda));
                Ok(ctx)
            }
            Err(EglError::NoUsableDisplay { mut attempts }) => {
                attempts.insert(0, format!("CUDA device {}: {on_cuda}", device.raw()));
                Err(EglError::NoUsableDisplay { attempts })
            }
            Err(e) => Err(e),
        }
    }

    /// Why a context of [`for_cuda_device_or_any`](Self::for_cuda_device_or_any) is not on the
    /// CUDA GPU: the error of the first try. `None` for one on the CUDA GPU, and for contexts
    /// made otherwise.
    pub fn fallback_reason(&self) -> Option<&EglError> {
        self.fallback.as_deref()
    }

    /// Opens any OpenGL context it can and makes it current on this thread: an NVIDIA device
    /// first (the one with the lowest CUDA id), then Mesa's surfaceless platform, then Mesa's
    /// software device, then any other EGL device (with [`HeadlessConfig::software_first`],
    /// Mesa's software device first). For tests that must also run on CI machines
    /// without a GPU (llvmpipe), and for a program that shows frames with
    /// [`DisplayTarget`](crate::display::DisplayTarget) wherever it runs: after
    /// [`for_cuda_device`](Self::for_cuda_device) fails, a context from here gets the target's
    /// staged mode (registration needs NVIDIA's GL on the CUDA GPU).
    ///
    /// # Errors
    ///
    /// [`EglError::LibraryNotFound`] if libEGL is not installed; otherwise
    /// [`EglError::NoUsableDisplay`], listing every display tried and why it failed.
    pub fn any_gl() -> Result<Self, EglError> {
        Self::any_gl_with(&HeadlessConfig::default())
    }

    /// [`any_gl`](Self::any_gl) with explicit [`HeadlessConfig`] options.
    ///
    /// # Errors
    ///
    /// As [`any_gl`](Self::any_gl).
    pub fn any_gl_with(config: &HeadlessConfig) -> Result<Self, EglError> {
        let egl = sys::egl()?;
        let client_exts = sys::client_extensions(egl);
        let mut attempts = Vec::new();

        let mut devices = Vec::new();
        let device_api = match DeviceApi::load(egl, &client_exts) {
            Ok(api) => match api.devices() {
                Ok(list) => {
                    devices = list;
                    Some(api)
                }
                Err(e) => {
                    attempts.push(format!("device enumeration: {e}"));
                    None
                }
            },
            Err(e) => {
                attempts.push(format!("device platform: {e}"));
                None
            }
        };
        // GPUs first (NVIDIA's, lowest CUDA id first), then Mesa's surfaceless platform, then
        // Mesa's software device, then the rest; software first when the configuration asks.
        let rank = |d: &Device| {
            rank(
                d.info.is_software,
                d.info.cuda_device,
                config.software_first,
            )
        };
        devices.sort_by_key(rank);
        let split = devices
            .iter()
            .position(|d| rank(d).0 > 0)
            .unwrap_or(devices.len());
        let rest = devices.split_off(split);

        let try_device = |device: Device, attempts: &mut Vec<String>| -> Option<Self> {
            let api = device_api.as_ref()?;
            let label = format!("EGL device {}", device.info);
            let result = Self::on_device(egl, api, device, config);
            match result {
                Ok(ctx) => Some(ctx),
                Err(e) => {
                    log::warn!("{label}: {e}");
                    attempts.push(format!("{label}: {e}"));
                    None
                }
            }
        };

        for device in devices {
            if let Some(ctx) = try_device(device, &mut attempts) {
                return Ok(ctx);
            }
        }

        if sys::has_extension(&client_exts, "EGL_MESA_platform_surfaceless")
            && sys::has_extension(&client_exts, "EGL_EXT_platform_base")
        {
            match Self::mesa_surfaceless(egl, config) {
                Ok(ctx) => return Ok(ctx),
                Err(e) => {
                    log::warn!("Mesa surfaceless platform: {e}");
                    attempts.push(format!("Mesa surfaceless platform: {e}"));
                }
            }
        } else {
            attempts.push(
                "Mesa surfaceless platform: EGL_MESA_platform_surfaceless not offered".to_owned(),
            );
        }

        for device in rest {
            if let Some(ctx) = try_device(device, &mut attempts) {
                return Ok(ctx);
            }
        }
        Err(EglError::NoUsableDisplay { attempts })
    }
}

/// Where a device goes in [`HeadlessContext::any_gl_with`]'s order: rank 0 is tried before
/// Mesa's surfaceless platform, the others after it, lowest first.
fn rank(is_software: bool, cuda_device: Option<i32>, software_first: bool) -> (u8, i64) {
    match (is_software, cuda_device) {
        (true, _) if software_first => (0, 0),
        (_, Some(id)) => (if software_first { 2 } else { 0 }, i64::from(id)),
        (true, None) => (2, 0),
        (false, None) => (3, 0),
    }
}

impl HeadlessContext {
    /// The address of an OpenGL (or EGL) function, or null if unknown. For loaders such as
    /// `glow::Context::from_loader_function(|s| ctx.get_proc_address(s))`.
    #[must_use]
    pub fn get_proc_address(&self, name: &str) -> *const c_void {
        sys::proc_address(self.egl, name).map_or(std::ptr::null(), |f| f as *const c_void)
    }

    /// `GL_RENDERER`, such as `"NVIDIA H200/PCIe/SSE2"` or `"llvmpipe (LLVM 15.0.6, 256 bits)"`.
    #[must_use]
    pub fn renderer(&self) -> String {
        self.renderer.clone()
    }

    /// `GL_VENDOR`, such as `"NVIDIA Corporation"` or `"Mesa"`.
    #[must_use]
    pub fn vendor(&self) -> String {
        self.vendor.clone()
    }

    /// `GL_VERSION`, such as `"4.5.0 NVIDIA 580.65.06"` or `"4.5 (Core Profile) Mesa 22.3.6"`.
    #[must_use]
    pub fn version(&self) -> String {
        self.version.clone()
    }

    /// The OpenGL core version `(major, minor)` that was requested and granted (the driver may
    /// give a higher compatible version; see [`version`](Self::version)).
    #[must_use]
    pub fn requested_gl_version(&self) -> (u8, u8) {
        self.gl_request
    }

    /// The `EGL_CUDA_DEVICE_NV` value of the EGL device in use, or `None` if the context is not
    /// on an NVIDIA device (Mesa).
    #[must_use]
    pub fn cuda_device(&self) -> Option<i32> {
        self.device.as_ref().and_then(|d| d.cuda_device)
    }

    /// What EGL reports about the device in use, or `None` on Mesa's surfaceless platform.
    #[must_use]
    pub fn device_info(&self) -> Option<&EglDeviceInfo> {
        self.device.as_ref()
    }

    /// The EGL platform of the display in use.
    #[must_use]
    pub fn platform(&self) -> EglPlatform {
        self.platform
    }

    /// Whether rendering happens on the CPU (llvmpipe, softpipe, Mesa's software device), in
    /// which case CUDA interop is impossible.
    #[must_use]
    pub fn is_software(&self) -> bool {
        if self.device.as_ref().is_some_and(|d| d.is_software) {
            return true;
        }
        let renderer = self.renderer.to_ascii_lowercase();
        ["llvmpipe", "softpipe", "swrast", "software rasterizer"]
            .iter()
            .any(|s| renderer.contains(s))
    }

    /// Whether the context is current without any surface (`EGL_KHR_surfaceless_context`);
    /// otherwise a 16x16 pbuffer is bound.
    #[must_use]
    pub fn is_surfaceless(&self) -> bool {
        self.surface.is_none()
    }

    /// The EGL display's extension string.
    #[must_use]
    pub fn egl_extensions(&self) -> &str {
        &self.egl_extensions
    }

    /// The EGL version `(major, minor)` that `eglInitialize` reported for the display.
    #[must_use]
    pub fn egl_version(&self) -> (i32, i32) {
        self.display.version()
    }

    /// Whether the EGL display is cuda-gl's own: reference-counted by EGL
    /// (`EGL_KHR_display_reference`, where libEGL offers it), a separate `EGLDisplay` that no
    /// other library's `eglTerminate` reaches, terminated when its last context drops.
    ///
    /// `false`: the display is the one `eglGetPlatformDisplay` gives every user of this
    /// platform and device in the process (wgpu's GL backend, glutin, the application's own EGL
    /// code). cuda-gl then never terminates it (it stays initialised until the process exits,
    /// as other libraries also leave it), but another user's `eglTerminate` ends this context
    /// with it: [`make_current`](Self::make_current) and [`new_shared`](Self::new_shared) then
    /// return [`EglError::DisplayTerminated`]. Keep such a library's display (a wgpu instance
    /// with `Backends::GL`, a glutin display) alive until cuda-gl's contexts are dropped.
    #[must_use]
    pub fn has_own_display(&self) -> bool {
        self.display.tracked()
    }
}

#[cfg(test)]
mod tests {
    use super::rank;

    #[test]
    fn any_gl_tries_gpus_first_unless_software_is_asked_for() {
        let order = |software_first| {
            let mut devices = [
                (false, None),
                (true, None),
                (false, Some(1)),
                (false, Some(0)),
            ];
            devices.sort_by_key(|&(soft, cuda)| rank(soft, cuda, software_first));
            devices
        };
        assert_eq!(
            order(false),
            [
                (false, Some(0)),
                (false, Some(1)),
                (true, None),
                (false, None)
            ]
        );
        assert_eq!(
            order(true),
            [
                (true, None),
                (false, Some(0)),
                (false, Some(1)),
                (false, None)
            ]
        );
        // Before Mesa's surfaceless platform: the CUDA GPUs by default, the software device
        // when asked for.
        assert_eq!(rank(false, Some(3), false).0, 0);
        assert_eq!(rank(true, None, true).0, 0);
        assert!(rank(false, Some(0), true).0 > 0);
    }
}
