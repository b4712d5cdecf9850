//! Binary semaphores that both CUDA and GL can wait on and signal on the GPU. Neither API can
//! export one that the other imports, so Vulkan creates them (exportable as opaque file
//! descriptors) on the GPU CUDA runs on, and each API imports its own descriptor of the same
//! semaphore: CUDA with `cuImportExternalSemaphore`, GL with `GL_EXT_semaphore_fd`.

use crate::gpu::{Gpu, cu};
use anyhow::{Context as _, Result, bail, ensure};
use ash::vk;
use cuda_gl::{Stream, sys};
use std::ffi::{CStr, c_void};
use std::os::fd::{AsRawFd as _, FromRawFd as _, IntoRawFd as _, OwnedFd};

/// `GL_HANDLE_TYPE_OPAQUE_FD_EXT`.
const GL_HANDLE_TYPE_OPAQUE_FD_EXT: u32 = 0x9586;

/// A Vulkan instance and device on the GPU of a CUDA device, with `VK_KHR_external_semaphore_fd`.
/// It must outlive every [`SharedSemaphore`] made with it.
pub struct Vulkan {
    device: ash::Device,
    fd: ash::khr::external_semaphore_fd::Device,
    instance: ash::Instance,
    /// Keeps libvulkan loaded while the instance lives.
    _entry: ash::Entry,
    /// The physical device's name, for the report.
    pub name: String,
}

impl Vulkan {
    /// Opens libvulkan and a device whose `deviceUUID` is `cuda`'s UUID.
    pub fn open(cuda: &cuda_gl::Device) -> Result<Vulkan> {
        let mut uuid = sys::CUuuid::default();
        let driver = sys::driver()?;
        // SAFETY: `uuid` is a valid out-pointer; the device handle came from the driver.
        cu("cuDeviceGetUuid_v2", unsafe {
            driver.cuDeviceGetUuid_v2(&mut uuid, cuda.raw())
        })?;
        let cuda_uuid: [u8; 16] = uuid.bytes.map(|b| b as u8);
        // SAFETY: loads libvulkan's loader library, which stays open as long as `_entry`.
        let entry = unsafe { ash::Entry::load() }.context("loading libvulkan")?;
        let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_1);
        // SAFETY: a valid create info with no layers and no extensions.
        let instance = unsafe {
            entry.create_instance(
                &vk::InstanceCreateInfo::default().application_info(&app),
                None,
            )
        }
        .context("vkCreateInstance (Vulkan 1.1)")?;
        match Self::on(&instance, cuda_uuid) {
            Ok((device, name)) => {
                let fd = ash::khr::external_semaphore_fd::Device::new(&instance, &device);
                Ok(Vulkan {
                    device,
                    fd,
                    instance,
                    _entry: entry,
                    name,
                })
            }
            Err(e) => {
                // SAFETY: nothing was created from the instance (`on` failed before or while
                // creating the device, and a created device is returned, not dropped).
                unsafe { instance.destroy_instance(None) };
                Err(e)
            }
        }
    }

    /// Creates the device on the physical device with `cuda_uuid`.
    fn on(instance: &ash::Instance, cuda_uuid: [u8; 16]) -> Result<(ash::Device, String)> {
        // SAFETY: a live instance.
        let physical = unsafe { instance.enumerate_physical_devices() }
            .context("vkEnumeratePhysicalDevices")?;
        let mut found = None;
        for &pd in &physical {
            let mut id = vk::PhysicalDeviceIDProperties::default();
            let mut props = vk::PhysicalDeviceProperties2::default().push_next(&mut id);
            // SAFETY: `pd` came from this instance; the chain is valid for Vulkan 1.1.
            unsafe { instance.get_physical_device_properties2(pd, &mut props) };
            let name = props
                .properties
                .device_name_as_c_str()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if id.device_uuid == cuda_uuid {
                found = Some((pd, name));
                break;
            }
        }
        let Some((pd, name)) = found else {
            bail!(
                "none of the {} Vulkan physical devices has the CUDA device's UUID",
                physical.len()
            );
        };
        let mut external = vk::ExternalSemaphoreProperties::default();
        let query = vk::PhysicalDeviceExternalSemaphoreInfo::default()
            .handle_type(vk::ExternalSemaphoreHandleTypeFlags::OPAQUE_FD);
        // SAFETY: `pd` came from this instance; both structs are valid.
        unsafe {
            instance.get_physical_device_external_semaphore_properties(pd, &query, &mut external)
        };
        let needed = vk::ExternalSemaphoreFeatureFlags::EXPORTABLE;
        ensure!(
            external.external_semaphore_features.contains(needed),
            "{name}: Vulkan cannot export binary semaphores as opaque file descriptors"
        );
        let priorities = [1.0f32];
        let queue = vk::DeviceQueueCreateInfo::default()
            .queue_family_index(0)
            .queue_priorities(&priorities);
        let extensions = [ash::khr::external_semaphore_fd::NAME.as_ptr()];
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(std::slice::from_ref(&queue))
            .enabled_extension_names(&extensions);
        // SAFETY: `pd` came from this instance; queue family 0 exists on every device and one
        // queue of it is asked for; the extension name is NUL-terminated.
        let device = unsafe { instance.create_device(pd, &info, None) }
            .with_context(|| format!("{name}: vkCreateDevice with VK_KHR_external_semaphore_fd"))?;
        Ok((device, name))
    }
}

impl Drop for Vulkan {
    fn drop(&mut self) {
        // SAFETY: every semaphore made with this device is gone (they borrow it); the device and
        // the instance are destroyed once, the device first.
        unsafe {
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}

/// The `GL_EXT_semaphore(_fd)` entry points.
#[derive(Clone, Copy)]
pub struct GlSemaphoreFns {
    gen_semaphores: GenFn,
    delete_semaphores: DeleteFn,
    import_fd: ImportFn,
    wait: WaitSignalFn,
    signal: WaitSignalFn,
}

/// `glGenSemaphoresEXT(GLsizei n, GLuint *semaphores)`.
type GenFn = unsafe extern "system" fn(i32, *mut u32);
/// `glDeleteSemaphoresEXT(GLsizei n, const GLuint *semaphores)`.
type DeleteFn = unsafe extern "system" fn(i32, *const u32);
/// `glImportSemaphoreFdEXT(GLuint semaphore, GLenum handleType, GLint fd)`.
type ImportFn = unsafe extern "system" fn(u32, u32, i32);
/// `glWaitSemaphoreEXT` / `glSignalSemaphoreEXT(GLuint semaphore, GLuint numBufferBarriers,
/// const GLuint *buffers, GLuint numTextureBarriers, const GLuint *textures,
/// const GLenum *layouts)`.
type WaitSignalFn = unsafe extern "system" fn(u32, u32, *const u32, u32, *const u32, *const u32);

/// Whether the current GL context lists `extension`.
fn has_extension(extension: &str) -> bool {
    let mut count = 0;
    // SAFETY: a valid out-pointer; a context is current.
    unsafe { gl::GetIntegerv(gl::NUM_EXTENSIONS, &mut count) };
    (0..u32::try_from(count).unwrap_or(0)).any(|i| {
        // SAFETY: `i` < GL_NUM_EXTENSIONS; the result is null or a static NUL-terminated string.
        let name = unsafe { gl::GetStringi(gl::EXTENSIONS, i) };
        // SAFETY: checked non-null; GL's strings stay valid while the context lives.
        !name.is_null() && unsafe { CStr::from_ptr(name.cast()) }.to_bytes() == extension.as_bytes()
    })
}

impl GlSemaphoreFns {
    /// Loads the entry points through the bench's EGL context, after checking the extensions.
    pub fn load(gpu: &Gpu) -> Result<GlSemaphoreFns> {
        for ext in ["GL_EXT_semaphore", "GL_EXT_semaphore_fd"] {
            ensure!(has_extension(ext), "the GL context lacks {ext}");
        }
        let get = |name: &str| -> Result<*const c_void> {
            let p = gpu.gl_proc_address(name);
            ensure!(!p.is_null(), "eglGetProcAddress({name}) returned null");
            Ok(p)
        };
        let pointers = [
            get("glGenSemaphoresEXT")?,
            get("glDeleteSemaphoresEXT")?,
            get("glImportSemaphoreFdEXT")?,
            get("glWaitSemaphoreEXT")?,
            get("glSignalSemaphoreEXT")?,
        ];
        // SAFETY: each pointer is the named entry point of NVIDIA's GL (eglGetProcAddress of the
        // current context, whose extensions were checked above), with the signature the
        // Khronos registry gives it, which the types spell; libEGL stays loaded for the whole
        // process.
        unsafe {
            Ok(GlSemaphoreFns {
                gen_semaphores: std::mem::transmute::<*const c_void, GenFn>(pointers[0]),
                delete_semaphores: std::mem::transmute::<*const c_void, DeleteFn>(pointers[1]),
                import_fd: std::mem::transmute::<*const c_void, ImportFn>(pointers[2]),
                wait: std::mem::transmute::<*const c_void, WaitSignalFn>(pointers[3]),
                signal: std::mem::transmute::<*const c_void, WaitSignalFn>(pointers[4]),
            })
        }
    }
}

/// One Vulkan binary semaphore, imported into CUDA and into the current GL context.
pub struct SharedSemaphore<'v> {
    cuda: sys::CUexternalSemaphore,
    gl_name: u32,
    gl: GlSemaphoreFns,
    semaphore: vk::Semaphore,
    vulkan: &'v Vulkan,
}

impl<'v> SharedSemaphore<'v> {
    /// Creates an exportable semaphore and imports one descriptor of it into each API.
    pub fn new(vulkan: &'v Vulkan, gl: GlSemaphoreFns) -> Result<SharedSemaphore<'v>> {
        let mut export = vk::ExportSemaphoreCreateInfo::default()
            .handle_types(vk::ExternalSemaphoreHandleTypeFlags::OPAQUE_FD);
        let info = vk::SemaphoreCreateInfo::default().push_next(&mut export);
        // SAFETY: a live device; a valid create info chain.
        let semaphore = unsafe { vulkan.device.create_semaphore(&info, None) }
            .context("vkCreateSemaphore (exportable as an opaque fd)")?;
        let mut out = SharedSemaphore {
            cuda: std::ptr::null_mut(),
            gl_name: 0,
            gl,
            semaphore,
            vulkan,
        };
        let fd = out.export()?;
        let mut desc = sys::CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC {
            type_: sys::CUexternalSemaphoreHandleType::CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD,
            ..Default::default()
        };
        desc.handle.fd = fd.into_raw_fd();
        // SAFETY: a valid descriptor of an opaque-fd semaphore; the out-pointer is valid; on
        // success CUDA owns the descriptor, on failure it is closed below.
        let rc = unsafe { sys::driver()?.cuImportExternalSemaphore(&mut out.cuda, &desc) };
        if !rc.is_success() {
            // SAFETY: the import failed, so the descriptor is still ours and is closed once.
            drop(unsafe { OwnedFd::from_raw_fd(desc.handle.fd) });
            out.cuda = std::ptr::null_mut();
            cu("cuImportExternalSemaphore", rc)?;
        }
        let fd = out.export()?;
        // SAFETY: one name written to a valid out-pointer.
        unsafe { (gl.gen_semaphores)(1, &mut out.gl_name) };
        crate::glres::check("glGenSemaphoresEXT")?;
        // SAFETY: a fresh semaphore name; an opaque-fd descriptor of a Vulkan semaphore of the
        // same GPU (matched by UUID). GL owns the descriptor after a successful import.
        unsafe { (gl.import_fd)(out.gl_name, GL_HANDLE_TYPE_OPAQUE_FD_EXT, fd.as_raw_fd()) };
        match crate::glres::check("glImportSemaphoreFdEXT") {
            Ok(()) => {
                let _ = fd.into_raw_fd();
            }
            Err(e) => return Err(e), // `fd` is still ours and drops closed.
        }
        Ok(out)
    }

    /// One new opaque descriptor of the semaphore (each import consumes one).
    fn export(&self) -> Result<OwnedFd> {
        let info = vk::SemaphoreGetFdInfoKHR::default()
            .semaphore(self.semaphore)
            .handle_type(vk::ExternalSemaphoreHandleTypeFlags::OPAQUE_FD);
        // SAFETY: the semaphore was created exportable as an opaque fd.
        let fd =
            unsafe { self.vulkan.fd.get_semaphore_fd(&info) }.context("vkGetSemaphoreFdKHR")?;
        ensure!(fd >= 0, "vkGetSemaphoreFdKHR returned descriptor {fd}");
        // SAFETY: a fresh descriptor that nothing else owns.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    /// Queues a signal of the semaphore on `stream` (after the work queued before it).
    pub fn cuda_signal(&self, stream: &Stream) -> Result<()> {
        let params = sys::CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS::default();
        // SAFETY: one imported semaphore and one zeroed parameter block (binary semaphore: no
        // fence value); `stream` is live in the current context.
        cu("cuSignalExternalSemaphoresAsync", unsafe {
            sys::driver()?.cuSignalExternalSemaphoresAsync(&self.cuda, &params, 1, stream.raw())
        })
    }

    /// Queues a wait for the semaphore on `stream` (work queued after it runs after the signal).
    pub fn cuda_wait(&self, stream: &Stream) -> Result<()> {
        let params = sys::CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS::default();
        // SAFETY: as in `cuda_signal`; a signal of this semaphore was queued before (the callers
        // alternate signals and waits).
        cu("cuWaitExternalSemaphoresAsync", unsafe {
            sys::driver()?.cuWaitExternalSemaphoresAsync(&self.cuda, &params, 1, stream.raw())
        })
    }

    /// Makes GL's later commands wait for the semaphore; `buffers` are the buffers they read.
    pub fn gl_wait(&self, buffers: &[u32]) {
        self.gl_call(self.gl.wait, buffers);
    }

    /// Signals the semaphore once GL's earlier commands (on `buffers`) have completed.
    pub fn gl_signal(&self, buffers: &[u32]) {
        self.gl_call(self.gl.signal, buffers);
    }

    /// `glWaitSemaphoreEXT` or `glSignalSemaphoreEXT` with `buffers` and no textures.
    fn gl_call(&self, call: WaitSignalFn, buffers: &[u32]) {
        let n = u32::try_from(buffers.len()).unwrap_or(0);
        let none = std::ptr::null();
        // SAFETY: `call` is one of the two entry points, `gl_name` an imported semaphore,
        // `buffers` holds `n` live buffer names, and no textures (so no layouts) are passed.
        unsafe { call(self.gl_name, n, buffers.as_ptr(), 0, none, none) };
    }
}

impl Drop for SharedSemaphore<'_> {
    fn drop(&mut self) {
        if !self.cuda.is_null()
            && let Ok(driver) = sys::driver()
        {
            // SAFETY: imported once and destroyed once; the group drained both APIs first.
            let _ = unsafe { driver.cuDestroyExternalSemaphore(self.cuda) };
        }
        if self.gl_name != 0 {
            // SAFETY: the name came from glGenSemaphoresEXT in the current context.
            unsafe { (self.gl.delete_semaphores)(1, &self.gl_name) };
        }
        // SAFETY: created from this device; no queue of it ever used the semaphore.
        unsafe { self.vulkan.device.destroy_semaphore(self.semaphore, None) };
    }
}
