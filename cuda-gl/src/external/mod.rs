//! External memory: CUDA-owned device memory that OpenGL imports, shared with no map or unmap.
//!
//! The map/unmap path ([`RegisteredBuffer`](crate::RegisteredBuffer)) lets the driver order
//! every handoff between CUDA and GL. This module is the other way round: CUDA allocates the
//! memory with the virtual memory management API (`cuMemCreate`, asking for a POSIX file
//! descriptor handle), exports it once as a file descriptor, and OpenGL imports that descriptor
//! with `GL_EXT_memory_object_fd` and binds a buffer object to it. Both APIs then see the same
//! bytes for as long as both objects live, and the application orders the accesses itself:
//!
//! - before CUDA writes a slot, the CPU waits for the GL fence placed after GL's last read of
//!   it (`glClientWaitSync`);
//! - before GL reads a slot, the CPU waits for the CUDA event recorded after the writes
//!   (polling `cuEventQuery`).
//!
//! Both waits give up after a limit ([`DEFAULT_TIMEOUT`] unless set) with [`Error::Timeout`].
//!
//! CUDA cannot wait for a GL fence on the GPU, and GL cannot wait for a CUDA event on the GPU
//! (`glWaitSync` only orders GL contexts among themselves; the GPU-side bridge,
//! `GL_EXT_semaphore`, imports semaphores that CUDA cannot export), so both waits are CPU
//! waits. [`ExternalRing`] keeps several slots so that those waits are for work of earlier
//! frames, which is usually done.
//!
//! # Ring depth and lag
//! With `k` slots and GL `lag` frames behind CUDA (step `n`: CUDA writes frame `n` into slot
//! `n % k`, GL reads frame `n - lag`), the write of frame `n` waits for GL's reads of frame
//! `n - k`, issued `k - 1 - lag` steps earlier, and the read of frame `n - lag` waits for CUDA's
//! writes, issued `lag` steps earlier. A wait for work issued in the same step blocks until the
//! other API has run, which costs a full CUDA ⇄ GL switch. Give both waits slack:
//! `lag = (k - 1) / 2`, so **3 slots with GL 1 frame behind**, or more slots for more slack.
//! 2 slots leave one of the two waits without slack and only tie with the map/unmap ring, at
//! any depth of it. The measured time per frame of each depth and lag is in
//! `docs/benchmarks.md` (section "Frames in flight: external-memory ring vs map/unmap ring").
//!
//! # Types
//! - [`ExternalGl`]: the GL context current when it was made (the owner), checked for
//!   `GL_EXT_memory_object(_fd)`; cuda-gl resolves the entry points itself, no loader needed.
//! - [`ExportableMemory`]: the CUDA allocation (physical memory, virtual address range,
//!   mapping, access); exports file descriptors.
//! - [`GlMemoryBuffer`]: a GL memory object imported from one export, and a GL buffer whose
//!   storage is that memory.
//! - [`ExternalRing`]: slots of both, with one CUDA event and one GL fence each; its guards
//!   [`CudaWrite`] and [`GlRead`] do the waits and leave the marks.
//! - [`FrameStream`]: the streaming path. Slots like the ring's, filled by a producer closure
//!   and drawn by a consumer closure, handed from CUDA to GL in bursts of frames, so that the
//!   two APIs wait for each other once per burst: sustained throughput close to that of CUDA and
//!   GL running with nothing shared, for a few frames of latency (see `docs/benchmarks.md`,
//!   "Streaming").
//!
//! # What is checked, and what is `unsafe`
//! - **`unsafe`, vouched for by the caller**: [`ExternalRing::read_unordered`] skips the wait
//!   for CUDA's writes, so GL may read torn frames, and [`FrameStream::disable_ordering`] skips
//!   both waits.
//! - **At compile time**: a guard borrows the ring mutably, so a slot cannot be written and read
//!   at once, nor the ring dropped under a guard, and a [`CudaWrite`] borrows its stream.
//!   [`ExternalRing`], [`FrameStream`], [`GlMemoryBuffer`] and [`GlRead`] are neither `Send`
//!   nor `Sync`: their GL calls (the drops' included) go to the context current on the calling
//!   thread.
//! - **At run time, the owning GL context**: [`GlMemoryBuffer::import`], every
//!   [`ExternalRing`] call that waits or hands out a guard, and [`GlRead::finish`] check that the
//!   context current when the [`ExternalGl`] was made is current (one `eglGetCurrentContext`
//!   or `glXGetCurrentContext` call, and the context's canary: see the safety model), and
//!   return [`Error::WrongGlContext`], [`Error::GlContextGone`] or [`Error::NoGlContext`]
//!   without calling GL otherwise. A drop that finds another context (or
//!   none) current logs an error and leaks the GL objects instead of deleting them: leaking is
//!   harmless, deleting by name in another context would delete that context's objects.
//! - **At run time, the slot's state**: each slot records which guard is out. A guard that was
//!   leaked (`mem::forget`) or failed to finish is found by the next [`ExternalRing::write`],
//!   [`ExternalRing::read`], [`ExternalRing::wait_idle`] or drop of its slot, which logs a warning
//!   and recovers with a wait: a leaked [`CudaWrite`] synchronizes the whole CUDA context (its
//!   stream may be gone; at most the [wait limit](crate::wait_limit) (10 s by default), else
//!   [`Error::Timeout`] and the slot stays marked for the next call), and a leaked [`GlRead`] gets
//!   a fence placed now (it signals after every GL command issued so far, the leaked reads
//!   included), which the next write waits for. A finished guard costs nothing more than the
//!   compare of the state.
//!
//! # Release order
//! `cuMemRelease` frees the physical memory only "when all outstanding mappings to the memory are
//! unmapped and when all outstanding references to the handle (including its shareable
//! counterparts) are also released" (CUDA driver API reference). A GL memory object imported from
//! an exported descriptor is such a reference, so either release order is memory-safe: a GL buffer
//! that outlives its [`ExportableMemory`] still reads the same bytes (the GPU tests check this).
//! cuda-gl still deletes the GL side first, after waiting for GL's reads: an [`ExternalRing`] waits
//! for its fences and events, then deletes each slot's GL buffer and memory object, then unmaps and
//! releases the CUDA allocation (waiting for the CUDA context first, at most the wait limit; when
//! that or an earlier wait fails, the CUDA allocations are leaked rather than unmapped under work
//! that may still use them, and the failure is recorded for
//! [`Context::check_drop_errors`](crate::Context::check_drop_errors)). The GL context that imported
//! the memory must be current on the thread that drops a [`GlMemoryBuffer`] or an [`ExternalRing`];
//! otherwise their GL objects are leaked (logged), and the ring still releases its CUDA
//! allocations, whose physical memory the leaked imports keep.
//!
//! # Example
//!
//! One frame per iteration through a 3-slot ring; GL draws frame `n - 1` while CUDA writes
//! frame `n`:
//!
//! ```no_run
//! use cuda_gl::external::{ExternalGl, ExternalRing};
//! use cuda_gl::{Context, Function, LaunchConfig, Stream};
//! use std::sync::Arc;
//!
//! fn frames(
//!     ctx: &Arc<Context>,
//!     stream: &Stream,
//!     kernel: &Function, // e.g. plasma_pbo(uchar4* out, int w, int h, float t)
//! ) -> cuda_gl::Result<()> {
//!     let (w, h) = (1920u32, 1080u32);
//!     let gl = ExternalGl::current()?; // the GL context current on this thread
//!     let mut ring = ExternalRing::new(ctx, &gl, 3, (w * h * 4) as usize)?;
//!     for n in 0..600usize {
//!         let write = ring.write(n % 3, stream)?; // waits for GL's reads of frame n - 3
//!         // SAFETY: the slot holds w * h RGBA8 pixels; the kernel runs on `stream`, which
//!         // `finish` marks with the slot's event.
//!         unsafe {
//!             kernel.launch(
//!                 LaunchConfig::for_image(w, h),
//!                 stream,
//!                 (write.device_ptr(), w as i32, h as i32, n as f32 / 60.0),
//!             )?;
//!         }
//!         write.finish()?;
//!         if n >= 1 {
//!             let read = ring.read((n - 1) % 3)?; // waits for CUDA's writes of frame n - 1
//!             let _buffer = read.buffer(); // e.g. a GL_TEXTURE_BUFFER's storage; draw from it
//!             read.finish()?; // fences GL's reads and flushes
//!         }
//!     }
//!     ring.wait_idle()
//! }
//! ```

// One job per file: the GL entry points and fences, the CUDA allocation, the GL import, the
// ring with its guards, the stream of frames in bursts and what its closures get, and the
// slots both are made of; a GPU lib test of the import check.
#[cfg(all(test, feature = "egl"))]
mod check_tests;
mod exportable;
mod external_gl;
mod frame;
mod frame_stream;
mod import;
mod ring;
mod slot;

pub use exportable::ExportableMemory;
pub use external_gl::ExternalGl;
pub use frame::{FrameRead, FrameWrite};
pub use frame_stream::{FrameStream, MAX_STREAM_SLOTS};
pub use import::GlMemoryBuffer;
pub use ring::{CudaWrite, ExternalRing, GlRead};

#[cfg(doc)]
use crate::error::Error;
use std::time::Duration;

/// `GL_HANDLE_TYPE_OPAQUE_FD_EXT` (GL_EXT_memory_object_fd).
const GL_HANDLE_TYPE_OPAQUE_FD_EXT: u32 = 0x9586;
/// `GL_NUM_DEVICE_UUIDS_EXT` (GL_EXT_memory_object).
const GL_NUM_DEVICE_UUIDS_EXT: u32 = 0x9596;
/// `GL_DEVICE_UUID_EXT` (GL_EXT_memory_object).
const GL_DEVICE_UUID_EXT: u32 = 0x9597;

/// The extensions external memory needs.
const REQUIRED_EXTENSIONS: [&str; 2] = ["GL_EXT_memory_object", "GL_EXT_memory_object_fd"];

/// How long a fence or event wait may take before [`Error::Timeout`], unless changed with
/// [`ExternalRing::set_timeout`] or [`FrameStream::set_timeout`].
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

#[cfg(test)]
mod tests {
    use super::*;

    /// The converse, that `ExternalRing`, `FrameStream`, `GlMemoryBuffer` and `GlRead` are not
    /// `Send`, is checked by the compile-fail tests (`tests/ui/external_*_not_send.rs`,
    /// `tests/ui/frame_stream_not_send.rs`).
    #[test]
    fn the_types_whose_drop_makes_no_gl_call_move_between_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<ExternalGl>();
        send_sync::<ExportableMemory>();
    }
}
