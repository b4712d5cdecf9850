//! The GL import: [`GlMemoryBuffer`], a GL memory object imported from an
//! [`ExportableMemory`]'s file descriptor and a GL buffer whose storage it is.

use super::GL_HANDLE_TYPE_OPAQUE_FD_EXT;
use super::exportable::ExportableMemory;
use super::external_gl::ExternalGl;
use crate::error::{Error, Result, UsageError};
use crate::gl_name::BufferName;
use crate::gl_object::Kind;
use crate::glapi::{Fence, GlFns, GlOwner, claim, have};
use crate::result;
use crate::wait::{legacy_stream_within, wait_limit};
use cuda_gl_sys as sys;
use std::marker::PhantomData;
use std::os::fd::{AsRawFd, IntoRawFd};
use std::sync::Mutex;

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
    owner: GlOwner,
    /// This process's claim on the buffer, so that it cannot be registered with CUDA as well
    /// (a mapping of it would be a second view of the memory, outside this import's ordering).
    claim: Option<claim::Claim>,
    memory_object: u32,
    buffer: u32,
    size: usize,
    /// Earlier imports of the same memory that did not show CUDA's bytes, kept alive so that the
    /// retry gets another memory object; deleted with this one.
    duds: Vec<GlMemoryBuffer>,
    /// `!Send` and `!Sync`: GL calls go to the context current on the calling thread.
    _not_send: PhantomData<*const ()>,
}

/// How many imports [`GlMemoryBuffer::import`] tries before [`Error::ImportNotShared`].
const IMPORT_ATTEMPTS: usize = 4;
/// How many bytes the import check writes and reads back.
const CHECK_BYTES: usize = 16;

/// Held by every import while it checks its first bytes, so that no two imports of one memory
/// (from two threads, each with a GL context of its own) borrow the same bytes at once.
static CHECKING: Mutex<()> = Mutex::new(());

impl GlMemoryBuffer {
    /// Exports a file descriptor from `memory`, imports it into the current GL context (which
    /// takes ownership of it), and creates a buffer of `memory.requested_size()` bytes on it.
    ///
    /// Then it checks that GL sees CUDA's bytes through the buffer: with GL's commands and the CUDA
    /// context's work finished (each waited for at most the [wait limit](crate::wait_limit), 10 s
    /// by default), CUDA writes a marker over the first 16 bytes, GL reads them back through a GPU
    /// copy, and CUDA writes the old bytes back (on the legacy default stream, each copy waited for
    /// at most the wait limit). An import that fails the check is kept aside (deleted with the
    /// returned buffer) and the import is tried again, up to 4 times: NVIDIA's driver 580 was seen
    /// to give the 32nd memory object of a GL context storage that CUDA's writes never reach.
    ///
    /// A check that gives up while its copies are still queued (work another thread queued
    /// meanwhile on a blocking stream holds them up) leaves them queued, and `memory` remembers
    /// it: [`ExportableMemory::device_ptr`], the next import and the memory's drop wait for them
    /// first (each within the wait limit), so that the put-back of the old bytes cannot overwrite
    /// a later write. (GL cannot wait for CUDA's work: before GL commands of yours write through
    /// another import of the same memory after such a timeout, call `device_ptr`, which returns
    /// once the put-back has run.)
    ///
    /// Imports are checked one at a time in the process (a lock held across the check), so two
    /// threads importing the same memory never borrow its bytes at once. Safe code has no other
    /// way to write an [`ExportableMemory`] during the call; a kernel launched on it from another
    /// thread meanwhile (an `unsafe` launch) could see the marker, which the launch's caller
    /// rules out. The buffer is claimed, so it cannot also be registered with CUDA.
    ///
    /// The GL context `gl` was loaded for must be current. GL state: the `GL_COPY_WRITE_BUFFER`
    /// and `GL_COPY_READ_BUFFER` bindings are restored afterwards.
    ///
    /// # Errors
    /// - [`Error::WrongGlContext`] or [`Error::NoGlContext`] when the context `gl` was loaded
    ///   for is not current (nothing is imported);
    /// - [`Error::WrongDevice`] when the GL context does not run on the memory's device
    ///   (compared by `GL_DEVICE_UUID_EXT`);
    /// - the driver's error from `cuMemExportToShareableHandle`;
    /// - [`Error::GlCall`] naming `glCreateMemoryObjectsEXT`, `glImportMemoryFdEXT` (the
    ///   descriptor is then closed), `glBufferStorageMemEXT` or the check's
    ///   `glCopyBufferSubData`;
    /// - [`Error::ImportNotShared`] when no attempt showed CUDA's bytes;
    /// - [`Error::Timeout`] when an earlier import's check that gave up still has copies queued
    ///   (see above), when GL's commands (`glClientWaitSync`) or the CUDA context's work
    ///   (`cuCtxSynchronize`) queued before the check have not finished within the wait limit
    ///   (nothing was copied), or when the check's copies have not (they are left queued and
    ///   waited for by the calls above: nothing for you to order);
    /// - the driver's error from the check's `cuCtxSynchronize`, `cuStreamQuery` or copies.
    #[doc(alias = "glImportMemoryFdEXT")]
    #[doc(alias = "glBufferStorageMemEXT")]
    #[doc(alias = "glCreateMemoryObjectsEXT")]
    pub fn import(gl: &ExternalGl, memory: &ExportableMemory) -> Result<GlMemoryBuffer> {
        let fns = gl.check("glImportMemoryFdEXT (not called)")?;
        gl.check_device(memory.context().device())?;
        memory.wait_for_checks("GlMemoryBuffer::import")?;
        let mut duds = Vec::new();
        for attempt in 1..=IMPORT_ATTEMPTS {
            let mut import = Self::import_once(gl, fns, memory)?;
            let shows = {
                let _one_at_a_time = CHECKING.lock().unwrap_or_else(|p| p.into_inner());
                import.shows(fns, memory)?
            };
            if shows {
                import.duds = duds;
                return Ok(import);
            }
            log::warn!(
                "cuda-gl: GL memory object {} (import {attempt} of {IMPORT_ATTEMPTS}) does not \
                 show the CUDA allocation's bytes; keeping it aside and importing again",
                import.memory_object
            );
            duds.push(import);
        }
        Err(Error::ImportNotShared {
            attempts: IMPORT_ATTEMPTS,
        })
    }

    /// One export and import, unchecked.
    fn import_once(
        gl: &ExternalGl,
        fns: &GlFns,
        memory: &ExportableMemory,
    ) -> Result<GlMemoryBuffer> {
        let create = have(fns.create_memory_objects, "glCreateMemoryObjectsEXT")?;
        let import_fd = have(fns.import_memory_fd, "glImportMemoryFdEXT")?;
        let storage = have(fns.buffer_storage_mem, "glBufferStorageMemEXT")?;
        let fd = memory.export_fd()?;
        fns.take_pending_errors("glImportMemoryFdEXT");
        let mut out = GlMemoryBuffer {
            owner: gl.owner,
            claim: None,
            memory_object: 0,
            buffer: 0,
            size: memory.requested_size(),
            duds: Vec::new(),
            _not_send: PhantomData,
        };
        // SAFETY: one name is written to a valid out-pointer.
        unsafe { create(1, &mut out.memory_object) };
        fns.check("glCreateMemoryObjectsEXT")?;
        // SAFETY: the memory object is fresh; `fd` is an open descriptor of a CUDA allocation
        // of `memory.size()` bytes, exported as an opaque POSIX descriptor.
        unsafe {
            import_fd(
                out.memory_object,
                memory.size() as u64,
                GL_HANDLE_TYPE_OPAQUE_FD_EXT,
                fd.as_raw_fd(),
            );
        }
        fns.check("glImportMemoryFdEXT")?; // On error `fd` is still ours and drops closed.
        // GL owns the descriptor after a successful import: it must not be closed here.
        let _ = fd.into_raw_fd();
        let size = isize::try_from(out.size).map_err(|_| UsageError::TooLarge {
            what: "the size of the GL buffer in bytes",
            value: out.size as u128,
            max: isize::MAX as u128,
        })?;
        let mut previous = 0;
        // SAFETY: valid out-pointers; the buffer name is fresh and bound before its storage is
        // set from the imported memory object at offset 0, `size` <= the memory object's size;
        // the previous binding is restored.
        unsafe {
            (fns.get_integerv)(gl::COPY_WRITE_BUFFER_BINDING, &mut previous);
            (fns.gen_buffers)(1, &mut out.buffer);
            (fns.bind_buffer)(gl::COPY_WRITE_BUFFER, out.buffer);
            storage(gl::COPY_WRITE_BUFFER, size, out.memory_object, 0);
            (fns.bind_buffer)(gl::COPY_WRITE_BUFFER, previous.max(0) as u32);
        }
        fns.check("glBufferStorageMemEXT")?;
        // Claimed from birth, rejected imports included (their buffers live on beside the
        // accepted one), so that no registration of the name can come first.
        out.claim = claim::claim(Kind::Buffer, out.buffer, gl.owner);
        if out.claim.is_none() {
            // Another registration holds the name (of a context that shares objects with this
            // one, made in the moment since glGenBuffers): leave the buffer to it.
            let name = std::mem::replace(&mut out.buffer, 0);
            return Err(Error::AlreadyRegistered {
                name,
                kind: Kind::Buffer.describe().to_string(),
            });
        }
        Ok(out)
    }

    /// Whether GL reads through the buffer what CUDA wrote to `memory`: CUDA writes the
    /// complement of the first bytes, GL reads them back, CUDA writes the old bytes back.
    fn shows(&self, fns: &GlFns, memory: &ExportableMemory) -> Result<bool> {
        let n = self.size.min(CHECK_BYTES);
        let ptr = memory.raw_ptr();
        // GL's commands and the context's CUDA work queued so far (through other imports of the
        // same memory, say) finish before the first bytes are borrowed for the check, each
        // waited for at most the wait limit: a timeout here leaves nothing behind.
        Fence::place(self.owner)?.client_wait(wait_limit(), || {
            format!(
                "GL's commands before the import check of GL buffer {}",
                self.buffer
            )
        })?;
        let ctx = memory.context();
        ctx.synchronize_within(wait_limit())?;
        ctx.bind()?;
        let mut old = [0u8; CHECK_BYTES];
        // SAFETY: (1) `ptr` is the start of the memory's mapping in its bound context, at least
        // `n` bytes long; (2) `old` has room for `n` bytes. The copy into pageable memory has
        // landed when the call returns (with no limit on purpose: a DMA must not outlive the
        // borrow of `old`); the context was idle just before, so only work another thread
        // queues meanwhile on a blocking stream can hold it up.
        unsafe { result::mem::copy_dtoh(old.as_mut_ptr().cast(), ptr, n) }?;
        let marker = old.map(|b| !b);
        let seen = self.mark_and_put_back(fns, ptr, &old[..n], &marker[..n]);
        if seen.is_err() {
            // The marker or the put-back may still be queued: the memory's next hand-out waits.
            memory.check_left_queued();
        }
        Ok(seen??[..n] == marker[..n])
    }

    /// Writes `marker` over the bytes at `ptr`, reads them back through GL once it has landed,
    /// then writes `old` back, all on the legacy default stream, and waits for each write at most
    /// the wait limit. The outer error (the copies may still be queued) is the caller's to
    /// record; the inner one is the read's, made with the put-back waited for.
    fn mark_and_put_back(
        &self,
        fns: &GlFns,
        ptr: sys::CUdeviceptr,
        old: &[u8],
        marker: &[u8],
    ) -> Result<Result<[u8; CHECK_BYTES]>> {
        let n = old.len();
        // Queued as memsets of one byte each (`cuMemsetD8Async`, whose value travels in the
        // call): a give-up below leaves them queued after this returns, when `marker` and `old`
        // are gone, and `cuMemcpyHtoDAsync` from pageable memory is not documented to have read
        // its source by then (CUDA's "API synchronization behavior": the driver "may
        // synchronize with the stream" to stage it, and older releases staged it later on a
        // worker thread). The waits below are the only ones, each with a limit.
        // SAFETY: `ptr` is the start of the memory's mapping in its bound context, at least `n`
        // bytes long; the memory outlives the sets (a check that gives up is recorded in it,
        // and its drop waits for the context); the legacy default stream of the bound context.
        unsafe { set_bytes_async(ptr, marker) }?;
        const COPIES: &str = "the import check's copies on the legacy default stream (the \
                              memory's first 16 bytes are put back when they run)";
        // The marker lands before GL reads (and before later work of any stream may run).
        let seen =
            legacy_stream_within(wait_limit(), COPIES).and_then(|()| self.read_front(fns, n));
        #[cfg(test)]
        tests_hook::after_the_read();
        // The old bytes go back whatever the read gave, after the marker (the same stream).
        // SAFETY: as for the marker.
        unsafe { set_bytes_async(ptr, old) }?;
        legacy_stream_within(wait_limit(), COPIES)?;
        Ok(seen)
    }

    /// The buffer's first `n` (at most [`CHECK_BYTES`]) bytes, as GL's commands see them:
    /// copied on the GPU into a buffer of GL's own (`glCopyBufferSubData`), which is read back.
    /// Reading the imported buffer itself with `glGetBufferSubData` would not do: after such a
    /// read, NVIDIA's driver 580 was seen to return the same bytes to later reads of it, whatever
    /// CUDA wrote meanwhile.
    fn read_front(&self, fns: &GlFns, n: usize) -> Result<[u8; CHECK_BYTES]> {
        let mut out = [0u8; CHECK_BYTES];
        let (mut read, mut write, mut scratch) = (0, 0, 0);
        fns.take_pending_errors("glCopyBufferSubData");
        // SAFETY: valid out-pointers; the scratch buffer is fresh and given CHECK_BYTES bytes;
        // the imported buffer is live and at least `n` <= CHECK_BYTES bytes long; `out` has room
        // for CHECK_BYTES; the previous bindings are restored and the scratch buffer deleted.
        unsafe {
            (fns.get_integerv)(gl::COPY_READ_BUFFER_BINDING, &mut read);
            (fns.get_integerv)(gl::COPY_WRITE_BUFFER_BINDING, &mut write);
            (fns.gen_buffers)(1, &mut scratch);
            (fns.bind_buffer)(gl::COPY_READ_BUFFER, self.buffer);
            (fns.bind_buffer)(gl::COPY_WRITE_BUFFER, scratch);
            (fns.buffer_data)(
                gl::COPY_WRITE_BUFFER,
                CHECK_BYTES as isize,
                std::ptr::null(),
                gl::STREAM_READ,
            );
            (fns.copy_buffer_sub_data)(
                gl::COPY_READ_BUFFER,
                gl::COPY_WRITE_BUFFER,
                0,
                0,
                n as isize,
            );
            (fns.get_buffer_sub_data)(
                gl::COPY_WRITE_BUFFER,
                0,
                n as isize,
                out.as_mut_ptr().cast(),
            );
            (fns.bind_buffer)(gl::COPY_READ_BUFFER, read.max(0) as u32);
            (fns.bind_buffer)(gl::COPY_WRITE_BUFFER, write.max(0) as u32);
            (fns.delete_buffers)(1, &scratch);
        }
        fns.check("glCopyBufferSubData")?;
        Ok(out)
    }

    /// The GL buffer name.
    pub fn buffer(&self) -> BufferName {
        BufferName(self.buffer)
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
        let fns = match self.owner.check("glDeleteBuffers (not called)") {
            Ok(fns) => fns,
            Err(e) => {
                log::error!(
                    "cuda-gl: GL buffer {} and memory object {} are leaked, not deleted: {e}",
                    self.buffer,
                    self.memory_object
                );
                // The buffer lives on: it stays claimed, so it is never registered.
                std::mem::forget(self.claim.take());
                return;
            }
        };
        // The claim ends once the buffer is deleted, not before: no registration of the name in
        // between.
        let claim = self.claim.take();
        // SAFETY: both names came from `import` and are deleted once (0 is ignored by GL); GL
        // defers the deletion of objects that pending commands still use. The memory object
        // entry point was resolved when the import was made (checked by `ExternalGl::current`).
        unsafe {
            (fns.delete_buffers)(1, &self.buffer);
            if let Some(delete) = fns.delete_memory_objects {
                delete(1, &self.memory_object);
            }
        }
        if let Err(e) = fns.check("glDeleteMemoryObjectsEXT") {
            log::warn!("cuda-gl: deleting an imported GL buffer failed during drop: {e}");
        }
        drop(claim);
    }
}

/// Queues writes of `bytes` from `ptr` on the legacy default stream, one `cuMemsetD8Async` a
/// byte: nothing of the host is read after the calls return (the import check writes at most
/// [`CHECK_BYTES`] bytes).
///
/// # Safety
/// 1. `[ptr, ptr + bytes.len())` is device memory of the bound context that stays allocated
///    until the sets have run.
///
/// # Errors
/// The driver's error from `cuMemsetD8Async` (the bytes before it are queued).
unsafe fn set_bytes_async(ptr: sys::CUdeviceptr, bytes: &[u8]) -> Result<()> {
    for (at, &value) in (ptr..).zip(bytes) {
        // SAFETY: (1), one byte of the range; the legacy default stream of the bound context.
        unsafe { result::mem::memset_d8_async(at, value, 1, sys::CU_STREAM_LEGACY) }?;
    }
    Ok(())
}

/// What a GPU lib test (`check_tests`) queues between the import check's read and its put-back:
/// work another thread could queue at that moment, which no single-threaded test can time.
#[cfg(test)]
pub(super) mod tests_hook {
    use std::cell::RefCell;

    thread_local! {
        static AFTER_THE_READ: RefCell<Option<Box<dyn FnOnce()>>> = const { RefCell::new(None) };
    }

    /// Has the next import check on this thread call `work` after its read. (Its one caller,
    /// `check_tests`, needs a GL context: feature `egl`.)
    #[cfg(feature = "egl")]
    pub(in crate::external) fn set_after_the_read(work: impl FnOnce() + 'static) {
        AFTER_THE_READ.with(|hook| *hook.borrow_mut() = Some(Box::new(work)));
    }

    /// Runs (once) the work set for this point, if any.
    pub(super) fn after_the_read() {
        if let Some(work) = AFTER_THE_READ.with(|hook| hook.borrow_mut().take()) {
            work();
        }
    }
}
