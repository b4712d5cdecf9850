//! The GL import: [`GlMemoryBuffer`], a GL memory object imported from an
//! [`ExportableMemory`]'s file descriptor and a GL buffer whose storage it is.

use super::GL_HANDLE_TYPE_OPAQUE_FD_EXT;
use super::gl_fns::{ExternalGl, Fns};
use super::memory::ExportableMemory;
use crate::error::{Error, Result};
use crate::glprobe::GlOwner;
use std::fmt;
use std::marker::PhantomData;
use std::os::fd::{AsRawFd, IntoRawFd};

/// A GL memory object imported from an [`ExportableMemory`], and a GL buffer object whose
/// storage is that memory (`glBufferStorageMemEXT`, immutable, `requested_size` bytes).
///
/// Use [`buffer`](Self::buffer) like any buffer name (as a `GL_TEXTURE_BUFFER`'s storage, a
/// shader storage buffer, the source of `glCopyBufferSubData` or of `glTexSubImage2D` through
/// `GL_PIXEL_UNPACK_BUFFER`). Dropping it deletes the buffer and the memory object when the GL
/// context that imported it is current; with another context or none current, it logs an error
/// and leaks both names instead (deleting them there would delete another context's objects).
///
/// It is neither `Send` nor `Sync`: its drop makes GL calls, which go to the context current on
/// the dropping thread.
#[derive(Debug)]
pub struct GlMemoryBuffer {
    fns: FnsDebug,
    owner: GlOwner,
    memory_object: u32,
    buffer: u32,
    size: usize,
    /// `!Send` and `!Sync`: GL calls go to the context current on the calling thread.
    _not_send: PhantomData<*const ()>,
}

/// [`Fns`] with a `Debug` that prints nothing.
#[derive(Clone, Copy)]
struct FnsDebug(Fns);

impl fmt::Debug for FnsDebug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ExternalGl")
    }
}

impl GlMemoryBuffer {
    /// Exports a file descriptor from `memory`, imports it into the current GL context (which
    /// takes ownership of it), and creates a buffer of `memory.requested_size()` bytes on it.
    ///
    /// The GL context `gl` was loaded for must be current. GL state: the `GL_COPY_WRITE_BUFFER`
    /// binding is restored afterwards.
    ///
    /// # Errors
    /// - [`Error::WrongGlContext`] or [`Error::NoGlContext`] when the context `gl` was loaded
    ///   for is not current (nothing is imported);
    /// - [`Error::WrongDevice`] when the GL context does not run on the memory's device
    ///   (compared by `GL_DEVICE_UUID_EXT`);
    /// - the driver's error from `cuMemExportToShareableHandle`;
    /// - [`Error::GlCall`] naming `glCreateMemoryObjectsEXT`, `glImportMemoryFdEXT` (the
    ///   descriptor is then closed) or `glBufferStorageMemEXT`.
    #[doc(alias = "glImportMemoryFdEXT")]
    #[doc(alias = "glBufferStorageMemEXT")]
    #[doc(alias = "glCreateMemoryObjectsEXT")]
    pub fn import(gl: &ExternalGl, memory: &ExportableMemory) -> Result<GlMemoryBuffer> {
        gl.owner.check("glImportMemoryFdEXT (not called)")?;
        gl.check_device(memory.context().device())?;
        let fd = memory.export_fd()?;
        let fns = gl.fns;
        fns.drain_errors();
        let mut out = GlMemoryBuffer {
            fns: FnsDebug(fns),
            owner: gl.owner,
            memory_object: 0,
            buffer: 0,
            size: memory.requested_size(),
            _not_send: PhantomData,
        };
        // SAFETY: one name is written to a valid out-pointer.
        unsafe { (fns.create_memory_objects)(1, &mut out.memory_object) };
        fns.check("glCreateMemoryObjectsEXT")?;
        // SAFETY: the memory object is fresh; `fd` is an open descriptor of a CUDA allocation
        // of `memory.size()` bytes, exported as an opaque POSIX descriptor.
        unsafe {
            (fns.import_memory_fd)(
                out.memory_object,
                memory.size() as u64,
                GL_HANDLE_TYPE_OPAQUE_FD_EXT,
                fd.as_raw_fd(),
            );
        }
        fns.check("glImportMemoryFdEXT")?; // On error `fd` is still ours and drops closed.
        // GL owns the descriptor after a successful import: it must not be closed here.
        let _ = fd.into_raw_fd();
        let size = isize::try_from(out.size).map_err(|_| {
            Error::InvalidArgument(format!("{} bytes is too large for GL", out.size))
        })?;
        let mut previous = 0;
        // SAFETY: valid out-pointers; the buffer name is fresh and bound before its storage is
        // set from the imported memory object at offset 0, `size` <= the memory object's size;
        // the previous binding is restored.
        unsafe {
            (fns.get_integerv)(gl::COPY_WRITE_BUFFER_BINDING, &mut previous);
            (fns.gen_buffers)(1, &mut out.buffer);
            (fns.bind_buffer)(gl::COPY_WRITE_BUFFER, out.buffer);
            (fns.buffer_storage_mem)(gl::COPY_WRITE_BUFFER, size, out.memory_object, 0);
            (fns.bind_buffer)(gl::COPY_WRITE_BUFFER, previous.max(0) as u32);
        }
        fns.check("glBufferStorageMemEXT")?;
        Ok(out)
    }

    /// The GL buffer name.
    pub fn buffer(&self) -> u32 {
        self.buffer
    }

    /// The GL memory object name.
    pub fn memory_object(&self) -> u32 {
        self.memory_object
    }

    /// The buffer's size in bytes.
    pub fn size(&self) -> usize {
        self.size
    }
}

impl Drop for GlMemoryBuffer {
    fn drop(&mut self) {
        if let Err(e) = self.owner.check("glDeleteBuffers (not called)") {
            log::error!(
                "cuda-gl: GL buffer {} and memory object {} are leaked, not deleted: {e}",
                self.buffer,
                self.memory_object
            );
            return;
        }
        let fns = self.fns.0;
        // SAFETY: both names came from `import` and are deleted once (0 is ignored by GL); GL
        // defers the deletion of objects that pending commands still use.
        unsafe {
            (fns.delete_buffers)(1, &self.buffer);
            (fns.delete_memory_objects)(1, &self.memory_object);
        }
        if let Err(e) = fns.check("glDeleteMemoryObjectsEXT") {
            log::warn!("cuda-gl: deleting an imported GL buffer failed during drop: {e}");
        }
    }
}
