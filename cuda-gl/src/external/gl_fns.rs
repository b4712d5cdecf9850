//! The hand-loaded GL entry points: `Fns`, [`ExternalGl`] (loaded through the caller's
//! loader, with the extension and device checks) and the GL fences.

use super::{GL_DEVICE_UUID_EXT, GL_NUM_DEVICE_UUIDS_EXT, REQUIRED_EXTENSIONS};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::glprobe::GlOwner;
use crate::result;
use std::ffi::{CStr, c_void};
use std::fmt;
use std::time::Duration;

pub(super) type GlSync = *const c_void;

/// Declares [`Fns`], one field per GL entry point, and its loader, from one list: each entry
/// is written once, as its visibility and field name, its GL name and its C signature (from the
/// Khronos registry). The fence and query entry points stay private to this file, so that GL
/// fences are only made and deleted through [`Fence`].
macro_rules! gl_fns {
    ($($vis:vis $field:ident: $name:literal = fn($($arg:ty),*) $(-> $ret:ty)?;)*) => {
        /// The GL entry points this module calls, resolved once through the caller's loader.
        #[derive(Clone, Copy)]
        pub(super) struct Fns {
            $(
                #[doc = concat!("`", $name, "`.")]
                $vis $field: unsafe extern "system" fn($($arg),*) $(-> $ret)?,
            )*
        }

        impl Fns {
            /// Resolves every entry point through `loader`.
            ///
            /// # Safety
            /// As (1) and (2) of [`ExternalGl::load_with`].
            unsafe fn load(
                loader: &mut dyn FnMut(&'static str) -> *const c_void,
            ) -> Result<Fns> {
                Ok(Fns {
                    $($field: {
                        let ptr = loader($name);
                        if ptr.is_null() {
                            return Err(Error::MissingGlFunction { function: $name });
                        }
                        // SAFETY: (1) of `ExternalGl::load_with`: the loader returned the
                        // address of the GL entry point `$name`, whose C signature is the
                        // field's type; a function pointer and a data pointer have the same
                        // size on every platform GL runs on.
                        unsafe {
                            std::mem::transmute::<
                                *const c_void,
                                unsafe extern "system" fn($($arg),*) $(-> $ret)?,
                            >(ptr)
                        }
                    },)*
                })
            }
        }
    };
}

gl_fns! {
    get_error: "glGetError" = fn() -> u32;
    pub(super) get_integerv: "glGetIntegerv" = fn(u32, *mut i32);
    get_string: "glGetString" = fn(u32) -> *const u8;
    get_stringi: "glGetStringi" = fn(u32, u32) -> *const u8;
    get_unsigned_bytei_v: "glGetUnsignedBytei_vEXT" = fn(u32, u32, *mut u8);
    pub(super) create_memory_objects: "glCreateMemoryObjectsEXT" = fn(i32, *mut u32);
    pub(super) delete_memory_objects: "glDeleteMemoryObjectsEXT" = fn(i32, *const u32);
    pub(super) import_memory_fd: "glImportMemoryFdEXT" = fn(u32, u64, u32, i32);
    pub(super) gen_buffers: "glGenBuffers" = fn(i32, *mut u32);
    pub(super) delete_buffers: "glDeleteBuffers" = fn(i32, *const u32);
    pub(super) bind_buffer: "glBindBuffer" = fn(u32, u32);
    pub(super) buffer_storage_mem: "glBufferStorageMemEXT" = fn(u32, isize, u32, u64);
    fence_sync: "glFenceSync" = fn(u32, u32) -> GlSync;
    client_wait_sync: "glClientWaitSync" = fn(GlSync, u32, u64) -> u32;
    delete_sync: "glDeleteSync" = fn(GlSync);
    flush: "glFlush" = fn();
    pub(super) finish: "glFinish" = fn();
    pub(super) get_buffer_sub_data: "glGetBufferSubData" = fn(u32, isize, isize, *mut c_void);
    pub(super) buffer_data: "glBufferData" = fn(u32, isize, *const c_void, u32);
    pub(super) copy_buffer_sub_data: "glCopyBufferSubData" = fn(u32, u32, isize, isize, isize);
}

impl Fns {
    /// Discards errors raised before this module's calls, so that the next check reports only
    /// its own call. Logged at debug level.
    pub(super) fn drain_errors(&self) {
        for _ in 0..16 {
            // SAFETY: glGetError has no arguments; a GL context is current (callers' contract).
            let code = unsafe { (self.get_error)() };
            if code == gl::NO_ERROR {
                return;
            }
            log::debug!("cuda-gl: discarding an earlier OpenGL error 0x{code:04x}");
        }
    }

    /// `Err(GlCall)` when `call` raised an error.
    pub(super) fn check(&self, call: &'static str) -> Result<()> {
        // SAFETY: as in `drain_errors`.
        let code = unsafe { (self.get_error)() };
        if code == gl::NO_ERROR {
            Ok(())
        } else {
            self.drain_errors();
            Err(Error::GlCall { call, code })
        }
    }

    fn string(&self, name: u32) -> Option<String> {
        // SAFETY: glGetString returns null or a static NUL-terminated string.
        let ptr = unsafe { (self.get_string)(name) };
        if ptr.is_null() {
            None
        } else {
            // SAFETY: non-null: a NUL-terminated string owned by the GL implementation.
            Some(
                unsafe { CStr::from_ptr(ptr.cast()) }
                    .to_string_lossy()
                    .into_owned(),
            )
        }
    }

    fn extensions(&self) -> Vec<String> {
        let mut count = 0;
        // SAFETY: `count` is a valid out-pointer for one integer.
        unsafe { (self.get_integerv)(gl::NUM_EXTENSIONS, &mut count) };
        (0..count.max(0) as u32)
            .filter_map(|i| {
                // SAFETY: `i` is below GL_NUM_EXTENSIONS; the result is null or a static
                // NUL-terminated string.
                let ptr = unsafe { (self.get_stringi)(gl::EXTENSIONS, i) };
                (!ptr.is_null()).then(|| {
                    // SAFETY: non-null, NUL-terminated (above).
                    unsafe { CStr::from_ptr(ptr.cast()) }
                        .to_string_lossy()
                        .into_owned()
                })
            })
            .collect()
    }

    fn device_uuids(&self) -> Vec<[u8; 16]> {
        let mut count = 0;
        // SAFETY: `count` is a valid out-pointer for one integer.
        unsafe { (self.get_integerv)(GL_NUM_DEVICE_UUIDS_EXT, &mut count) };
        (0..count.max(0) as u32)
            .map(|i| {
                let mut uuid = [0u8; 16];
                // SAFETY: `i` is below GL_NUM_DEVICE_UUIDS_EXT; GL writes GL_UUID_SIZE_EXT (16)
                // bytes into `uuid`.
                unsafe { (self.get_unsigned_bytei_v)(GL_DEVICE_UUID_EXT, i, uuid.as_mut_ptr()) };
                uuid
            })
            .collect()
    }

    /// Whether `sync` is signalled, without waiting and without flushing (the caller flushed
    /// when it placed the fence).
    pub(super) fn signalled(&self, sync: GlSync) -> Result<bool> {
        // SAFETY: `sync` is a live sync object of the current context (callers' contract); a
        // timeout of 0 only asks for the status.
        let status = unsafe { (self.client_wait_sync)(sync, 0, 0) };
        self.wait_status(status)
    }

    /// Waits on the CPU until `sync` is signalled, flushing GL's commands first.
    pub(super) fn client_wait(
        &self,
        sync: GlSync,
        timeout: Duration,
        what: impl FnOnce() -> String,
    ) -> Result<()> {
        let ns = u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX);
        // SAFETY: `sync` is a live sync object of the current context (callers' contract).
        let status = unsafe { (self.client_wait_sync)(sync, gl::SYNC_FLUSH_COMMANDS_BIT, ns) };
        if self.wait_status(status)? {
            Ok(())
        } else {
            Err(Error::Timeout {
                what: what(),
                timeout,
            })
        }
    }

    /// `glClientWaitSync`'s status as signalled (`true`) or not yet (`false`), or its error.
    fn wait_status(&self, status: u32) -> Result<bool> {
        match status {
            gl::ALREADY_SIGNALED | gl::CONDITION_SATISFIED => Ok(true),
            gl::TIMEOUT_EXPIRED => Ok(false),
            _ => {
                // SAFETY: as in `drain_errors`.
                let code = unsafe { (self.get_error)() };
                Err(Error::GlCall {
                    call: "glClientWaitSync",
                    code: if code == gl::NO_ERROR { status } else { code },
                })
            }
        }
    }
}

/// The `GL_EXT_memory_object` and `GL_EXT_memory_object_fd` entry points (and the few core ones
/// this module calls), loaded through the caller's loader for one GL context.
///
/// It remembers the GL context current when it was loaded (its owner): every import, ring call
/// and drop made with it checks that this context is current and returns
/// [`Error::WrongGlContext`] or [`Error::NoGlContext`] otherwise.
#[derive(Clone)]
pub struct ExternalGl {
    pub(super) fns: Fns,
    pub(super) owner: GlOwner,
    renderer: String,
    device_uuids: Vec<[u8; 16]>,
}

impl fmt::Debug for ExternalGl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExternalGl")
            .field("renderer", &self.renderer)
            .field("owner", &self.owner)
            .field("device_uuids", &self.device_uuids.len())
            .finish_non_exhaustive()
    }
}

impl ExternalGl {
    /// Resolves the entry points with `loader` (as `gl::load_with` does; e.g.
    /// `|name| headless.get_proc_address(name)` or GLFW's `window.get_proc_address(name)`),
    /// then checks that the current context offers `GL_EXT_memory_object` and
    /// `GL_EXT_memory_object_fd`.
    ///
    /// The GL context must be current on this thread; it becomes the owner that later calls are
    /// checked against.
    ///
    /// # Safety
    /// cuda-gl casts every pointer the loader returns to a function pointer and calls it, so:
    /// 1. Every non-null pointer `loader` returns for a name is that GL entry point of the
    ///    context current on this thread (or of every context of its driver, as
    ///    `eglGetProcAddress` returns them), with the signature the Khronos registry gives it.
    /// 2. The entry points stay callable for as long as the returned `ExternalGl`, its clones,
    ///    and the [`GlMemoryBuffer`](super::GlMemoryBuffer)s,
    ///    [`ExternalRing`](super::ExternalRing)s and [`FrameStream`](super::FrameStream)s made
    ///    with it live: the GL library is not unloaded meanwhile.
    /// 3. Where neither EGL nor GLX can tell which context is current (another GL platform),
    ///    cuda-gl cannot check the owner: the caller then makes every call on those objects,
    ///    and drops them, with the context that is current now current.
    ///
    /// # Errors
    /// - [`Error::MissingGlFunction`] when the loader returns null for an entry point;
    /// - [`Error::NoGlContext`] when EGL or GLX report that no GL context is current, and
    ///   [`Error::InvalidArgument`] when `glGetString` returns null (no context current either);
    /// - [`Error::MissingGlExtension`] when the context lacks either extension.
    #[doc(alias = "glImportMemoryFdEXT")]
    #[doc(alias = "GL_EXT_memory_object_fd")]
    pub unsafe fn load_with(
        mut loader: impl FnMut(&'static str) -> *const c_void,
    ) -> Result<ExternalGl> {
        // SAFETY: (1) and (2) are the caller's.
        let fns = unsafe { Fns::load(&mut loader) }?;
        let owner = GlOwner::current("ExternalGl::load_with")?;
        let Some(renderer) = fns.string(gl::RENDERER) else {
            return Err(Error::InvalidArgument(
                "glGetString(GL_RENDERER) returned null: no OpenGL context is current on this \
                 thread. Make the GL context current before ExternalGl::load_with"
                    .into(),
            ));
        };
        let extensions = fns.extensions();
        if let Some(missing) = first_missing(&extensions) {
            return Err(Error::MissingGlExtension {
                extension: missing,
                renderer,
            });
        }
        let device_uuids = fns.device_uuids();
        fns.drain_errors();
        Ok(ExternalGl {
            fns,
            owner,
            renderer,
            device_uuids,
        })
    }

    /// `GL_RENDERER` of the context it was loaded for.
    pub fn renderer(&self) -> &str {
        &self.renderer
    }

    /// The device UUIDs the GL context reports (`GL_DEVICE_UUID_EXT`); CUDA's device must be
    /// among them for an import to be the same memory.
    pub fn device_uuids(&self) -> &[[u8; 16]] {
        &self.device_uuids
    }

    /// Refuses a CUDA device that is not behind the GL context: accepted when the context
    /// reports the device's UUID (`GL_DEVICE_UUID_EXT`), or else when `cuGLGetDevices` lists
    /// the device.
    pub(super) fn check_device(&self, device: &Device) -> Result<()> {
        let cuda = result::device::uuid(device.raw())?;
        if self.device_uuids.contains(&cuda) {
            return Ok(());
        }
        let gl_devices = crate::gl_devices(crate::GlDeviceList::All);
        if let Ok(list) = &gl_devices
            && list.contains(device)
        {
            log::debug!(
                "cuda-gl: the GL context lists no device UUID equal to {}'s, but \
                 cuGLGetDevices lists the device",
                device.label()
            );
            return Ok(());
        }
        Err(Error::WrongDevice {
            gl_devices: gl_devices
                .map(|list| list.iter().map(Device::label).collect())
                .unwrap_or_default(),
            cuda: Box::new(device.label()),
        })
    }
}

/// The first required extension missing from `extensions`.
fn first_missing(extensions: &[String]) -> Option<&'static str> {
    REQUIRED_EXTENSIONS
        .into_iter()
        .find(|needed| !extensions.iter().any(|e| e == needed))
}

/// A GL fence sync object, deleted on drop (leaked when its context is not current).
///
/// Neither `Send` nor `Sync` (the raw `GLsync` pointer): its drop calls `glDeleteSync`, which
/// goes to the context current on the dropping thread.
pub(super) struct Fence {
    fns: Fns,
    owner: GlOwner,
    pub(super) sync: GlSync,
}

impl Fence {
    /// Places a fence after the GL commands issued so far (`glFenceSync`) and flushes them
    /// (`glFlush`), so that the GPU starts them now.
    pub(super) fn place(fns: Fns, owner: GlOwner) -> Result<Fence> {
        owner.check("glFenceSync (not called)")?;
        fns.drain_errors();
        // SAFETY: the condition and flags are the only values glFenceSync accepts; the owning
        // GL context is current (checked above).
        let sync = unsafe { (fns.fence_sync)(gl::SYNC_GPU_COMMANDS_COMPLETE, 0) };
        if sync.is_null() {
            fns.check("glFenceSync")?;
            return Err(Error::GlCall {
                call: "glFenceSync",
                code: gl::INVALID_OPERATION,
            });
        }
        let fence = Fence { fns, owner, sync };
        // SAFETY: no arguments; the owning context is current (above).
        unsafe { (fns.flush)() };
        Ok(fence)
    }
}

impl Drop for Fence {
    fn drop(&mut self) {
        if let Err(e) = self.owner.check("glDeleteSync (not called)") {
            log::error!("cuda-gl: a GL fence is leaked, not deleted: {e}");
            return;
        }
        // SAFETY: the sync object came from glFenceSync and is deleted once, with its context
        // current (checked above).
        unsafe { (self.fns.delete_sync)(self.sync) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loader_without_the_entry_points_is_a_typed_error() {
        // SAFETY: (1), (2): the loader returns no pointer, so nothing is called.
        let result = unsafe { ExternalGl::load_with(|_| std::ptr::null()) };
        assert!(
            result.is_err(),
            "a loader that returns null loaded the entry points"
        );
        let Err(err) = result else { return };
        assert!(
            matches!(
                err,
                Error::MissingGlFunction {
                    function: "glGetError"
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("get_proc_address"), "{err}");
    }

    #[test]
    fn both_extensions_are_required() {
        let have = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(first_missing(&have(&[])), Some("GL_EXT_memory_object"));
        assert_eq!(
            first_missing(&have(&["GL_EXT_memory_object", "GL_ARB_sync"])),
            Some("GL_EXT_memory_object_fd")
        );
        assert_eq!(
            first_missing(&have(&["GL_EXT_memory_object_fd", "GL_EXT_memory_object"])),
            None
        );
        let err = Error::MissingGlExtension {
            extension: "GL_EXT_memory_object_fd",
            renderer: "llvmpipe".into(),
        };
        assert!(
            err.to_string()
                .contains("does not support GL_EXT_memory_object_fd")
        );
    }
}
