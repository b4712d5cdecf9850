//! [`ExternalGl`]: the GL context that external memory is imported into, checked for the
//! extensions and the device.

use super::{GL_DEVICE_UUID_EXT, GL_NUM_DEVICE_UUIDS_EXT, REQUIRED_EXTENSIONS};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::glapi::{GlFns, GlOwner, have};
use crate::result;
use std::fmt;

/// The GL context current when it was made, checked to offer `GL_EXT_memory_object` and
/// `GL_EXT_memory_object_fd`. Imports, rings and frame streams are made with it.
///
/// cuda-gl calls GL through entry points it resolves itself (`eglGetProcAddress` or
/// `glXGetProcAddressARB`), so no loader is asked of the application. It remembers the context
/// (its owner): every import, ring call and drop made with it checks that this context is
/// current and returns [`Error::WrongGlContext`], [`Error::GlContextGone`] or
/// [`Error::NoGlContext`] otherwise.
#[derive(Clone)]
pub struct ExternalGl {
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
    /// The GL context current on this thread, after checking that it offers
    /// `GL_EXT_memory_object` and `GL_EXT_memory_object_fd`. It becomes the owner that later
    /// calls are checked against.
    ///
    /// # Errors
    /// - [`Error::NoGlContext`] when no GL context is current;
    /// - [`Error::GlPlatformUnknown`] when neither EGL nor GLX is loaded in the process;
    /// - [`Error::GlCheckUnavailable`] for a context without object labels (OpenGL 4.3 or
    ///   `GL_KHR_debug`), which the owner check needs;
    /// - [`Error::MissingGlExtension`] when the context lacks either extension, and
    ///   [`Error::MissingGlFunction`] when the platform resolves none of their entry points.
    #[doc(alias = "glImportMemoryFdEXT")]
    #[doc(alias = "GL_EXT_memory_object_fd")]
    pub fn current() -> Result<ExternalGl> {
        let (owner, fns) = GlOwner::current("ExternalGl::current")?;
        let renderer = fns.string(gl::RENDERER).unwrap_or_default();
        if let Some(missing) = first_missing(&fns.extensions()) {
            return Err(Error::MissingGlExtension {
                extension: missing,
                renderer,
            });
        }
        for (f, name) in [
            (
                fns.create_memory_objects.is_some(),
                "glCreateMemoryObjectsEXT",
            ),
            (
                fns.delete_memory_objects.is_some(),
                "glDeleteMemoryObjectsEXT",
            ),
            (fns.import_memory_fd.is_some(), "glImportMemoryFdEXT"),
            (fns.buffer_storage_mem.is_some(), "glBufferStorageMemEXT"),
            (
                fns.get_unsigned_bytei_v.is_some(),
                "glGetUnsignedBytei_vEXT",
            ),
        ] {
            if !f {
                return Err(Error::MissingGlFunction { function: name });
            }
        }
        fns.take_pending_errors("ExternalGl::current");
        let device_uuids = device_uuids(fns)?;
        fns.drain_errors();
        Ok(ExternalGl {
            owner,
            renderer,
            device_uuids,
        })
    }

    /// `GL_RENDERER` of the context it was made for.
    pub fn renderer(&self) -> &str {
        &self.renderer
    }

    /// The device UUIDs the GL context reports (`GL_DEVICE_UUID_EXT`); CUDA's device must be
    /// among them for an import to be the same memory.
    pub fn device_uuids(&self) -> &[[u8; 16]] {
        &self.device_uuids
    }

    /// The owning context's table, after checking that it is current.
    pub(super) fn check(&self, call: &'static str) -> Result<&'static GlFns> {
        self.owner.check(call)
    }

    /// Refuses a CUDA device that is not behind the GL context: accepted when the context
    /// reports the device's UUID (`GL_DEVICE_UUID_EXT`), or else when `cuGLGetDevices` lists
    /// the device.
    pub(super) fn check_device(&self, device: &Device) -> Result<()> {
        let cuda = result::device::uuid(device.raw())?;
        if self.device_uuids.contains(&cuda) {
            return Ok(());
        }
        let gl_devices = crate::device::gl_devices(crate::device::GlDeviceList::All);
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

/// The device UUIDs of the current context (`GL_EXT_memory_object`, which it was checked for).
fn device_uuids(fns: &GlFns) -> Result<Vec<[u8; 16]>> {
    let get = have(fns.get_unsigned_bytei_v, "glGetUnsignedBytei_vEXT")?;
    let mut count = 0;
    // SAFETY: a context is current; `count` is a valid out-pointer for one integer.
    unsafe { (fns.get_integerv)(GL_NUM_DEVICE_UUIDS_EXT, &mut count) };
    Ok((0..count.max(0) as u32)
        .map(|i| {
            let mut uuid = [0u8; 16];
            // SAFETY: `i` is below GL_NUM_DEVICE_UUIDS_EXT; GL writes GL_UUID_SIZE_EXT (16)
            // bytes into `uuid`.
            unsafe { get(GL_DEVICE_UUID_EXT, i, uuid.as_mut_ptr()) };
            uuid
        })
        .collect())
}

/// The first required extension missing from `extensions`.
fn first_missing(extensions: &[String]) -> Option<&'static str> {
    REQUIRED_EXTENSIONS
        .into_iter()
        .find(|needed| !extensions.iter().any(|e| e == needed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_gl_context_it_is_a_typed_error() {
        // No EGL or GLX context here (a CI machine): refused before any GL call.
        let err = ExternalGl::current().err();
        assert!(
            matches!(
                err,
                Some(Error::NoGlContext { .. } | Error::GlPlatformUnknown { .. })
            ),
            "{err:?}"
        );
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
