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
//!   (`cuEventSynchronize`).
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
//! Measured on an H200 at 1920x1080 (`docs/benchmarks.md`): 3 slots, lag 1: 341 µs per frame;
//! 8 slots, lag 4: 269 µs; 2 slots (slack on one side only): 496 µs, no better than the
//! map/unmap ring's 508 to 513 µs at any depth.
//!
//! # Types
//! - [`ExternalGl`]: the `GL_EXT_memory_object(_fd)` entry points, loaded with the caller's
//!   loader (like `gl::load_with`), after checking the extensions; it remembers the GL context
//!   that was current (the owner).
//! - [`ExportableMemory`]: the CUDA allocation (physical memory, virtual address range,
//!   mapping, access); exports file descriptors.
//! - [`GlMemoryBuffer`]: a GL memory object imported from one export, and a GL buffer whose
//!   storage is that memory.
//! - [`ExternalRing`]: slots of both, with one CUDA event and one GL fence each; its guards
//!   [`CudaWrite`] and [`GlRead`] do the waits and leave the marks.
//!
//! # What is checked, and what is `unsafe`
//! - **`unsafe`, vouched for by the caller**: [`ExternalGl::load_with`] calls whatever the
//!   loader returns, so the caller vouches that the pointers are the named GL entry points
//!   (see its `# Safety`); [`ExternalRing::read_unordered`] skips the wait for CUDA's writes, so
//!   GL may read torn frames.
//! - **At compile time**: a guard borrows the ring mutably, so a slot cannot be written and read
//!   at once, nor the ring dropped under a guard, and a [`CudaWrite`] borrows its stream.
//!   [`ExternalRing`], [`GlMemoryBuffer`] and [`GlRead`] are neither `Send` nor `Sync`: their
//!   GL calls (the drops' included) go to the context current on the calling thread.
//! - **At run time, the owning GL context**: [`GlMemoryBuffer::import`], every
//!   [`ExternalRing`] call that waits or hands out a guard, and [`GlRead::finish`] check that the
//!   context current when the [`ExternalGl`] was loaded is current (one `eglGetCurrentContext`
//!   or `glXGetCurrentContext` call), and return [`Error::WrongGlContext`] or
//!   [`Error::NoGlContext`] without calling GL otherwise. A drop that finds another context (or
//!   none) current logs an error and leaks the GL objects instead of deleting them: leaking is
//!   harmless, deleting by name in another context would delete that context's objects.
//! - **At run time, the slot's state**: each slot records which guard is out. A guard that was
//!   leaked (`mem::forget`) or failed to finish is found by the next [`ExternalRing::write`],
//!   [`ExternalRing::read`], [`ExternalRing::wait_idle`] or drop of its slot, which logs a
//!   warning and recovers with a wait: a leaked [`CudaWrite`] synchronizes the whole CUDA
//!   context (its stream may be gone), and a leaked [`GlRead`] gets a fence placed now (it
//!   signals after every GL command issued so far, the leaked reads included), which the next
//!   write waits for. A finished guard costs nothing more than the compare of the state.
//!
//! # Release order
//! `cuMemRelease` frees the physical memory only "when all outstanding mappings to the memory
//! are unmapped and when all outstanding references to the handle (including its shareable
//! counterparts) are also released" (CUDA driver API reference). A GL memory object imported
//! from an exported descriptor is such a reference, so either release order is memory-safe: a
//! GL buffer that outlives its [`ExportableMemory`] still reads the same bytes (the GPU tests
//! check this). cuda-gl still deletes the GL side first, after waiting for GL's reads: an
//! [`ExternalRing`] waits for its fences and events, then deletes each slot's GL buffer and
//! memory object, then unmaps and releases the CUDA allocation (waiting for the CUDA context
//! first). The GL context that imported the memory must be current on the thread that drops a
//! [`GlMemoryBuffer`] or an [`ExternalRing`]; otherwise their GL objects are leaked (logged), and
//! the ring still releases its CUDA allocations, whose physical memory the leaked imports keep.
//!
//! # Example
//!
//! One frame per iteration through a 3-slot ring; GL draws frame `n - 1` while CUDA writes
//! frame `n`:
//!
//! ```no_run
//! use cuda_gl::external::{ExternalGl, ExternalRing};
//! use cuda_gl::{Context, Function, LaunchConfig, Stream};
//! use std::ffi::c_void;
//! use std::sync::Arc;
//!
//! fn frames(
//!     ctx: &Arc<Context>,
//!     stream: &Stream,
//!     kernel: &Function, // e.g. plasma_pbo(uchar4* out, int w, int h, float t)
//!     loader: impl FnMut(&'static str) -> *const c_void,
//! ) -> cuda_gl::Result<()> {
//!     let (w, h) = (1920u32, 1080u32);
//!     // SAFETY: (1) `loader` is the windowing library's `get_proc_address` for the GL context
//!     // current on this thread; (2) that library stays loaded while the ring lives; (3) EGL or
//!     // GLX report the current context, so cuda-gl checks the owner.
//!     let gl = unsafe { ExternalGl::load_with(loader) }?;
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

use crate::context::Context;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::glprobe::GlOwner;
use crate::memory::DevicePtr;
use crate::result::{self, drv};
use crate::stream::{AsStream, Event};
use cuda_gl_sys as sys;
use std::ffi::{CStr, c_void};
use std::fmt;
use std::marker::PhantomData;
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd};
use std::sync::Arc;
use std::time::Duration;

/// `GL_HANDLE_TYPE_OPAQUE_FD_EXT` (GL_EXT_memory_object_fd).
const GL_HANDLE_TYPE_OPAQUE_FD_EXT: u32 = 0x9586;
/// `GL_NUM_DEVICE_UUIDS_EXT` (GL_EXT_memory_object).
const GL_NUM_DEVICE_UUIDS_EXT: u32 = 0x9596;
/// `GL_DEVICE_UUID_EXT` (GL_EXT_memory_object).
const GL_DEVICE_UUID_EXT: u32 = 0x9597;

/// The extensions external memory needs.
const REQUIRED_EXTENSIONS: [&str; 2] = ["GL_EXT_memory_object", "GL_EXT_memory_object_fd"];

/// How long a fence wait may take before [`Error::Timeout`], unless changed with
/// [`ExternalRing::set_timeout`].
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

type GlSync = *const c_void;

/// `glGetError`.
type GetError = unsafe extern "system" fn() -> u32;
/// `glGetIntegerv`.
type GetIntegerv = unsafe extern "system" fn(u32, *mut i32);
/// `glGetString`.
type GetString = unsafe extern "system" fn(u32) -> *const u8;
/// `glGetStringi`.
type GetStringi = unsafe extern "system" fn(u32, u32) -> *const u8;
/// `glGetUnsignedBytei_vEXT`.
type GetUnsignedBytei = unsafe extern "system" fn(u32, u32, *mut u8);
/// `glCreateMemoryObjectsEXT`.
type CreateMemoryObjects = unsafe extern "system" fn(i32, *mut u32);
/// `glDeleteMemoryObjectsEXT`.
type DeleteMemoryObjects = unsafe extern "system" fn(i32, *const u32);
/// `glImportMemoryFdEXT`.
type ImportMemoryFd = unsafe extern "system" fn(u32, u64, u32, i32);
/// `glGenBuffers`.
type GenBuffers = unsafe extern "system" fn(i32, *mut u32);
/// `glDeleteBuffers`.
type DeleteBuffers = unsafe extern "system" fn(i32, *const u32);
/// `glBindBuffer`.
type BindBuffer = unsafe extern "system" fn(u32, u32);
/// `glBufferStorageMemEXT`.
type BufferStorageMem = unsafe extern "system" fn(u32, isize, u32, u64);
/// `glFenceSync`.
type FenceSync = unsafe extern "system" fn(u32, u32) -> GlSync;
/// `glClientWaitSync`.
type ClientWaitSync = unsafe extern "system" fn(GlSync, u32, u64) -> u32;
/// `glDeleteSync`.
type DeleteSync = unsafe extern "system" fn(GlSync);
/// `glFlush`.
type Flush = unsafe extern "system" fn();

/// The GL entry points this module calls, resolved once through the caller's loader.
#[derive(Clone, Copy)]
struct Fns {
    get_error: GetError,
    get_integerv: GetIntegerv,
    get_string: GetString,
    get_stringi: GetStringi,
    get_unsigned_bytei_v: GetUnsignedBytei,
    create_memory_objects: CreateMemoryObjects,
    delete_memory_objects: DeleteMemoryObjects,
    import_memory_fd: ImportMemoryFd,
    gen_buffers: GenBuffers,
    delete_buffers: DeleteBuffers,
    bind_buffer: BindBuffer,
    buffer_storage_mem: BufferStorageMem,
    fence_sync: FenceSync,
    client_wait_sync: ClientWaitSync,
    delete_sync: DeleteSync,
    flush: Flush,
}

impl Fns {
    /// Resolves every entry point through `loader`.
    ///
    /// # Safety
    /// As (1) and (2) of [`ExternalGl::load_with`].
    unsafe fn load(loader: &mut dyn FnMut(&'static str) -> *const c_void) -> Result<Fns> {
        macro_rules! load {
            ($name:literal, $ty:ty) => {{
                let ptr = loader($name);
                if ptr.is_null() {
                    return Err(Error::MissingGlFunction { function: $name });
                }
                // SAFETY: (1) of `ExternalGl::load_with`: the loader returned the address of
                // the GL entry point `$name`, whose C signature (from the Khronos registry) is
                // `$ty`; a function pointer and a data pointer have the same size on every
                // platform GL runs on.
                unsafe { std::mem::transmute::<*const c_void, $ty>(ptr) }
            }};
        }
        Ok(Fns {
            get_error: load!("glGetError", GetError),
            get_integerv: load!("glGetIntegerv", GetIntegerv),
            get_string: load!("glGetString", GetString),
            get_stringi: load!("glGetStringi", GetStringi),
            get_unsigned_bytei_v: load!("glGetUnsignedBytei_vEXT", GetUnsignedBytei),
            create_memory_objects: load!("glCreateMemoryObjectsEXT", CreateMemoryObjects),
            delete_memory_objects: load!("glDeleteMemoryObjectsEXT", DeleteMemoryObjects),
            import_memory_fd: load!("glImportMemoryFdEXT", ImportMemoryFd),
            gen_buffers: load!("glGenBuffers", GenBuffers),
            delete_buffers: load!("glDeleteBuffers", DeleteBuffers),
            bind_buffer: load!("glBindBuffer", BindBuffer),
            buffer_storage_mem: load!("glBufferStorageMemEXT", BufferStorageMem),
            fence_sync: load!("glFenceSync", FenceSync),
            client_wait_sync: load!("glClientWaitSync", ClientWaitSync),
            delete_sync: load!("glDeleteSync", DeleteSync),
            flush: load!("glFlush", Flush),
        })
    }

    /// Discards errors raised before this module's calls, so that the next check reports only
    /// its own call. Logged at debug level.
    fn drain_errors(&self) {
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
    fn check(&self, call: &'static str) -> Result<()> {
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

    /// Waits on the CPU until `sync` is signalled, flushing GL's commands first.
    fn client_wait(
        &self,
        sync: GlSync,
        timeout: Duration,
        what: impl FnOnce() -> String,
    ) -> Result<()> {
        let ns = u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX);
        // SAFETY: `sync` is a live sync object of the current context (callers' contract).
        let status = unsafe { (self.client_wait_sync)(sync, gl::SYNC_FLUSH_COMMANDS_BIT, ns) };
        match status {
            gl::ALREADY_SIGNALED | gl::CONDITION_SATISFIED => Ok(()),
            gl::TIMEOUT_EXPIRED => Err(Error::Timeout {
                what: what(),
                timeout,
            }),
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
    fns: Fns,
    owner: GlOwner,
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
    ///    and the [`GlMemoryBuffer`]s and [`ExternalRing`]s made with it live: the GL library is
    ///    not unloaded meanwhile.
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
    fn check_device(&self, device: &Device) -> Result<()> {
        let mut uuid = sys::CUuuid::default();
        // SAFETY: `uuid` is a valid out-pointer; the device handle came from the driver.
        unsafe { drv!(cuDeviceGetUuid_v2(&mut uuid, device.raw())) }?;
        let cuda: [u8; 16] = uuid.bytes.map(|b| b as u8);
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

/// Device memory from `cuMemCreate`, exportable as a POSIX file descriptor, mapped into this
/// context's address space with read/write access.
///
/// The size is rounded up to the allocation granularity (2 MiB on current GPUs); the memory is
/// zeroed when created. Dropping it waits for the context's work (as `cuMemFree` does), then
/// unmaps it, frees the address range and releases the handle; the physical memory lives on
/// while a GL import of it does (see the [module docs](self#release-order)).
#[derive(Debug)]
pub struct ExportableMemory {
    ctx: Arc<Context>,
    handle: sys::CUmemGenericAllocationHandle,
    ptr: sys::CUdeviceptr,
    size: usize,
    requested: usize,
    reserved: bool,
    mapped: bool,
}

impl ExportableMemory {
    /// Allocates at least `bytes` bytes on the context's device.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for zero bytes, or a device without virtual memory management
    /// or POSIX file descriptor handles; otherwise the driver's error from
    /// `cuMemGetAllocationGranularity`, `cuMemCreate`, `cuMemAddressReserve`, `cuMemMap`,
    /// `cuMemSetAccess` or `cuMemsetD8`.
    #[doc(alias = "cuMemCreate")]
    #[doc(alias = "cuMemMap")]
    pub fn new(ctx: &Arc<Context>, bytes: usize) -> Result<ExportableMemory> {
        if bytes == 0 {
            return Err(Error::InvalidArgument(
                "cannot allocate 0 bytes of exportable memory".into(),
            ));
        }
        ctx.bind()?;
        let device = ctx.device();
        for (attribute, what) in [
            (
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
                "virtual memory management (cuMemCreate)",
            ),
            (
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
                "POSIX file descriptor memory handles",
            ),
        ] {
            if result::device::attribute(device.raw(), attribute)? == 0 {
                return Err(Error::InvalidArgument(format!(
                    "{} does not support {what}, which external memory needs; use the \
                     map/unmap path (RegisteredBuffer) instead",
                    device.label()
                )));
            }
        }
        let prop = allocation_prop(device);
        let mut granularity = 0usize;
        // SAFETY: both pointers are valid for the call.
        unsafe {
            drv!(cuMemGetAllocationGranularity(
                &mut granularity,
                &prop,
                sys::CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_RECOMMENDED
            ))
        }?;
        let size = bytes
            .checked_next_multiple_of(granularity.max(1))
            .ok_or_else(|| Error::InvalidArgument(format!("{bytes} bytes is too large")))?;
        let mut handle = 0;
        // SAFETY: `handle` is a valid out-pointer; `size` is a multiple of the granularity of
        // `prop`, which describes pinned device memory on the context's device.
        unsafe { drv!(cuMemCreate(&mut handle, size, &prop, 0)) }?;
        // Owned from here on: an error below releases what was done so far (in Drop).
        let mut memory = ExportableMemory {
            ctx: ctx.clone(),
            handle,
            ptr: 0,
            size,
            requested: bytes,
            reserved: false,
            mapped: false,
        };
        let mut ptr = 0;
        // SAFETY: `ptr` is a valid out-pointer; no fixed address or alignment is asked for.
        unsafe { drv!(cuMemAddressReserve(&mut ptr, size, 0, 0, 0)) }?;
        memory.ptr = ptr;
        memory.reserved = true;
        // SAFETY: the range [ptr, ptr + size) was just reserved and the handle is `size` long.
        unsafe { drv!(cuMemMap(ptr, size, 0, handle, 0)) }?;
        memory.mapped = true;
        let access = sys::CUmemAccessDesc {
            location: prop.location,
            flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        // SAFETY: the range is mapped (above); one access descriptor is passed.
        unsafe { drv!(cuMemSetAccess(ptr, size, &access, 1)) }?;
        // SAFETY: the range is mapped and accessible; the memset and the synchronize finish
        // before any other stream can see the memory.
        unsafe {
            drv!(cuMemsetD8_v2(ptr, 0, size))?;
            drv!(cuCtxSynchronize())?;
        }
        Ok(memory)
    }

    /// The size in bytes that was asked for.
    pub fn requested_size(&self) -> usize {
        self.requested
    }

    /// The size of the allocation in bytes: [`requested_size`](Self::requested_size) rounded
    /// up to the allocation granularity. This is the size a GL import names.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The device address, for kernel arguments.
    pub fn device_ptr(&self) -> DevicePtr<'_> {
        DevicePtr::new(self.ptr)
    }

    /// The context the memory belongs to.
    pub fn context(&self) -> &Arc<Context> {
        &self.ctx
    }

    /// Exports a new file descriptor for the allocation (`CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR`).
    ///
    /// Each call returns a new descriptor. An importer that takes ownership (GL does) needs its
    /// own; a descriptor that is dropped unused is closed.
    ///
    /// # Errors
    /// The driver's error from `cuMemExportToShareableHandle`.
    #[doc(alias = "cuMemExportToShareableHandle")]
    pub fn export_fd(&self) -> Result<OwnedFd> {
        self.ctx.bind()?;
        let mut fd: std::os::raw::c_int = -1;
        // SAFETY: for POSIX file descriptor handles the out-pointer is an `int`; the handle is
        // live and was created with that handle type requested.
        unsafe {
            drv!(cuMemExportToShareableHandle(
                (&raw mut fd).cast(),
                self.handle,
                sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                0
            ))
        }?;
        if fd < 0 {
            return Err(Error::InvalidArgument(format!(
                "cuMemExportToShareableHandle succeeded but returned descriptor {fd}"
            )));
        }
        // SAFETY: the driver created `fd` for the caller, who owns it from now on.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }
}

/// Pinned device memory on `device`, exportable as a POSIX file descriptor.
fn allocation_prop(device: &Device) -> sys::CUmemAllocationProp {
    sys::CUmemAllocationProp {
        type_: sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
        requestedHandleTypes:
            sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
        location: sys::CUmemLocation {
            type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
            id: device.raw(),
        },
        ..Default::default()
    }
}

impl Drop for ExportableMemory {
    fn drop(&mut self) {
        if !self.ctx.bind_for_drop("release exportable memory") {
            // The context was reset or is unusable: its allocations are gone with it.
            return;
        }
        if self.mapped {
            // SAFETY: no pointers; waits for every kernel that may still use the range.
            if let Err(e) = unsafe { drv!(cuCtxSynchronize()) } {
                self.ctx.record_drop_error("cuCtxSynchronize", e);
            }
            // SAFETY: the whole mapped range, unmapped once; nothing uses it after this.
            if let Err(e) = unsafe { drv!(cuMemUnmap(self.ptr, self.size)) } {
                self.ctx.record_drop_error("cuMemUnmap", e);
            }
        }
        if self.reserved {
            // SAFETY: the whole reserved range, now unmapped, freed once.
            if let Err(e) = unsafe { drv!(cuMemAddressFree(self.ptr, self.size)) } {
                self.ctx.record_drop_error("cuMemAddressFree", e);
            }
        }
        // SAFETY: the handle came from cuMemCreate and is released once.
        if let Err(e) = unsafe { drv!(cuMemRelease(self.handle)) } {
            self.ctx.record_drop_error("cuMemRelease", e);
        }
    }
}

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

/// A GL fence sync object, deleted on drop (leaked when its context is not current).
///
/// Neither `Send` nor `Sync` (the raw `GLsync` pointer): its drop calls `glDeleteSync`, which
/// goes to the context current on the dropping thread.
struct Fence {
    fns: Fns,
    owner: GlOwner,
    sync: GlSync,
}

impl Fence {
    /// Places a fence after the GL commands issued so far (`glFenceSync`) and flushes them
    /// (`glFlush`), so that the GPU starts them now.
    fn place(fns: Fns, owner: GlOwner) -> Result<Fence> {
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

/// Which of a slot's guards is out. A guard sets it when it is created and clears it when it
/// finishes; the ring finding it set means that the guard was leaked (`mem::forget`) or failed
/// to finish, and that the slot's event or fence does not cover its work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    /// No guard is out: the event and the fence cover the slot's work.
    Idle,
    /// A [`CudaWrite`] is out or was leaked: CUDA work may be writing the slot unrecorded.
    Writing,
    /// A [`GlRead`] is out or was leaked: GL commands may be reading the slot unfenced.
    Reading,
}

/// One slot of a ring. [`ExternalRing`]'s drop takes it apart: the fence and the GL buffer and
/// memory object first, then the CUDA allocation and the event.
struct Slot {
    read_fence: Option<Fence>,
    gl: GlMemoryBuffer,
    memory: ExportableMemory,
    written: Event,
    write_pending: bool,
    access: Access,
}

impl Slot {
    /// Restores the invariant that the event and the fence cover all of the slot's work after a
    /// guard was leaked: CUDA work of a leaked [`CudaWrite`] is waited for by synchronizing the
    /// whole CUDA context (the guard's stream may be gone), and GL commands of a leaked
    /// [`GlRead`] get the fence the guard did not place (waited for before the next write).
    fn recover_leaked_guard(&mut self, index: usize, fns: Fns, owner: GlOwner) -> Result<()> {
        match self.access {
            Access::Idle => {}
            Access::Writing => {
                log::warn!(
                    "cuda-gl: external ring slot {index} is still being written by CUDA (its \
                     CudaWrite was leaked or could not record its event); synchronizing the CUDA \
                     context"
                );
                self.memory.context().bind()?;
                result::ctx::synchronize()?;
                self.write_pending = false;
            }
            Access::Reading => {
                log::warn!(
                    "cuda-gl: external ring slot {index} is still being read by GL (its GlRead \
                     was leaked or could not place its fence); fencing the GL commands issued so \
                     far"
                );
                // Superseding an older fence is fine: the new one signals after it.
                self.read_fence = Some(Fence::place(fns, owner)?);
            }
        }
        self.access = Access::Idle;
        Ok(())
    }

    /// Waits on the CPU for the CUDA work recorded by the last finished [`CudaWrite`].
    fn wait_for_writes(&mut self) -> Result<()> {
        if self.write_pending {
            self.written.synchronize()?;
            self.write_pending = false;
        }
        Ok(())
    }

    /// Waits on the CPU for the GL commands fenced by the last finished [`GlRead`].
    fn wait_for_reads(&mut self, index: usize, fns: Fns, timeout: Duration) -> Result<()> {
        if let Some(fence) = &self.read_fence {
            fns.client_wait(fence.sync, timeout, || {
                format!("the GL fence after the reads of ring slot {index}")
            })?;
            self.read_fence = None;
        }
        Ok(())
    }
}

/// A ring of external-memory slots: CUDA writes one slot while GL reads others, ordered with a
/// CUDA event and a GL fence per slot and no map or unmap at all.
///
/// [`write`](Self::write) waits (on the CPU) until GL's last reads of the slot are done and
/// returns a [`CudaWrite`] with the slot's device pointer; finishing it records the slot's
/// event on the stream. [`read`](Self::read) waits (on the CPU) for that event and returns a
/// [`GlRead`] with the slot's GL buffer; finishing it places a GL fence and flushes. A guard
/// that is leaked instead of finished is caught by the next call on its slot, which recovers
/// with a wait (see [what is checked](self#what-is-checked-and-what-is-unsafe)).
///
/// All calls need the GL context the [`ExternalGl`] was loaded in current on the calling thread
/// ([`Error::WrongGlContext`] or [`Error::NoGlContext`] otherwise), and so does dropping the
/// ring: it waits for every slot's event and fence, then deletes the GL objects, then releases
/// the CUDA memory (see the [module docs](self#release-order)). The ring is neither `Send` nor
/// `Sync`, since its GL calls go to the context current on the calling thread.
pub struct ExternalRing {
    slots: Vec<Slot>,
    fns: Fns,
    owner: GlOwner,
    timeout: Duration,
    /// `!Send` and `!Sync`: GL calls go to the context current on the calling thread.
    _not_send: PhantomData<*const ()>,
}

impl fmt::Debug for ExternalRing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExternalRing")
            .field("slots", &self.slots.len())
            .field("slot_bytes", &self.slot_bytes())
            .field("timeout", &self.timeout)
            .field("owner", &self.owner)
            .finish_non_exhaustive()
    }
}

impl ExternalRing {
    /// Creates `slots` slots (1 to 16; 3 or more for frames in flight, see
    /// [ring depth and lag](self#ring-depth-and-lag)) of `bytes_per_slot` bytes each: one
    /// [`ExportableMemory`], one [`GlMemoryBuffer`] and one CUDA event per slot.
    ///
    /// The GL context `gl` was loaded for must be current.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for 0 or more than 16 slots or 0 bytes;
    /// [`Error::WrongGlContext`] or [`Error::NoGlContext`] when the context `gl` was loaded for
    /// is not current; otherwise as [`ExportableMemory::new`], [`GlMemoryBuffer::import`] and
    /// [`Event::new`].
    pub fn new(
        ctx: &Arc<Context>,
        gl: &ExternalGl,
        slots: usize,
        bytes_per_slot: usize,
    ) -> Result<ExternalRing> {
        if !(1..=16).contains(&slots) {
            return Err(Error::InvalidArgument(format!(
                "an external ring has 1 to 16 slots, not {slots} (3 or more keep frames in \
                 flight)"
            )));
        }
        gl.owner.check("glImportMemoryFdEXT (not called)")?;
        let mut ring = ExternalRing {
            slots: Vec::with_capacity(slots),
            fns: gl.fns,
            owner: gl.owner,
            timeout: DEFAULT_TIMEOUT,
            _not_send: PhantomData,
        };
        for _ in 0..slots {
            let memory = ExportableMemory::new(ctx, bytes_per_slot)?;
            let gl = GlMemoryBuffer::import(gl, &memory)?;
            ring.slots.push(Slot {
                read_fence: None,
                gl,
                memory,
                written: Event::new(ctx, false)?,
                write_pending: false,
                access: Access::Idle,
            });
        }
        Ok(ring)
    }

    /// How many slots there are.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether there are no slots (never true: a ring has at least one).
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The usable size of each slot in bytes (as asked for).
    pub fn slot_bytes(&self) -> usize {
        self.slots.first().map_or(0, |s| s.memory.requested_size())
    }

    /// The GL buffer name of `slot`, e.g. to create a texture buffer over it once.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a slot out of range.
    pub fn gl_buffer(&self, slot: usize) -> Result<u32> {
        Ok(self.slot_ref(slot)?.gl.buffer())
    }

    /// How long fence waits may take before [`Error::Timeout`] (default [`DEFAULT_TIMEOUT`]).
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    fn slot_ref(&self, slot: usize) -> Result<&Slot> {
        let len = self.slots.len();
        self.slots.get(slot).ok_or_else(|| out_of_range(slot, len))
    }

    /// The slot, after checking that the owning GL context is current (for `call`) and
    /// recovering a guard of it that was leaked.
    fn slot_checked(&mut self, slot: usize, call: &'static str) -> Result<&mut Slot> {
        let (fns, owner) = (self.fns, self.owner);
        let len = self.slots.len();
        let entry = self
            .slots
            .get_mut(slot)
            .ok_or_else(|| out_of_range(slot, len))?;
        owner.check(call)?;
        entry.recover_leaked_guard(slot, fns, owner)?;
        Ok(entry)
    }

    /// Starts CUDA's writes to `slot` on `stream`: waits on the CPU until GL's reads of the slot
    /// (up to its last [`GlRead`]) have finished, then returns the guard that hands out the
    /// slot's device pointer. Queue the writes on `stream`, then [`CudaWrite::finish`] (or drop)
    /// it.
    ///
    /// A guard of the slot that was leaked is recovered first: the CUDA context is synchronized
    /// (for a [`CudaWrite`]), or GL's commands are fenced and waited for (for a [`GlRead`]).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a slot out of range or a stream of another context;
    /// [`Error::WrongGlContext`] or [`Error::NoGlContext`] when the ring's GL context is not
    /// current; [`Error::Timeout`] or [`Error::GlCall`] from the fence wait
    /// (`glClientWaitSync`); the driver's error from synchronizing the context.
    #[doc(alias = "glClientWaitSync")]
    pub fn write<'a, S: AsStream>(
        &'a mut self,
        slot: usize,
        stream: &'a S,
    ) -> Result<CudaWrite<'a>> {
        let (fns, timeout) = (self.fns, self.timeout);
        if stream.raw_context() != self.slot_ref(slot)?.memory.context().raw() {
            return Err(Error::InvalidArgument(
                "the stream belongs to another CUDA context than the ring's memory".into(),
            ));
        }
        let entry = self.slot_checked(slot, "glClientWaitSync (not called)")?;
        entry.wait_for_reads(slot, fns, timeout)?;
        entry.access = Access::Writing;
        Ok(CudaWrite {
            slot: entry,
            stream: stream.raw_stream(),
            done: false,
        })
    }

    /// Starts GL's reads of `slot`: waits on the CPU until the CUDA work before the slot's last
    /// [`CudaWrite::finish`] has completed, then returns the guard that hands out the slot's GL
    /// buffer. Issue the GL commands that read it, then [`GlRead::finish`] (or drop) it.
    ///
    /// A guard of the slot that was leaked is recovered first, as in [`write`](Self::write).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a slot out of range; [`Error::WrongGlContext`] or
    /// [`Error::NoGlContext`] when the ring's GL context is not current; the driver's error from
    /// `cuEventSynchronize` (such as a kernel's fault) or from synchronizing the context.
    #[doc(alias = "cuEventSynchronize")]
    pub fn read(&mut self, slot: usize) -> Result<GlRead<'_>> {
        self.begin_read(slot, true)
    }

    /// [`read`](Self::read) without waiting for the event of CUDA's last finished write: the
    /// broken ordering, for tests that show that the wait is needed and for measuring what it
    /// costs. The context check and the recovery of a leaked guard still happen.
    ///
    /// # Safety
    /// 1. GL may read the slot while CUDA is still writing it: the caller accepts reading stale
    ///    or torn bytes (there is no other harm: the memory stays allocated).
    ///
    /// # Errors
    /// As [`read`](Self::read), less the event's.
    pub unsafe fn read_unordered(&mut self, slot: usize) -> Result<GlRead<'_>> {
        self.begin_read(slot, false)
    }

    /// [`read`](Self::read), waiting for CUDA's writes only when `ordered`.
    fn begin_read(&mut self, slot: usize, ordered: bool) -> Result<GlRead<'_>> {
        let (fns, owner) = (self.fns, self.owner);
        let entry = self.slot_checked(slot, "glFenceSync (not called)")?;
        if ordered {
            entry.wait_for_writes()?;
        } else {
            entry.write_pending = false;
        }
        entry.access = Access::Reading;
        Ok(GlRead {
            slot: entry,
            fns,
            owner,
            done: false,
            _not_send: PhantomData,
        })
    }

    /// Waits on the CPU for every slot's pending CUDA writes and GL reads, recovering leaked
    /// guards first.
    ///
    /// # Errors
    /// [`Error::WrongGlContext`] or [`Error::NoGlContext`] when the ring's GL context is not
    /// current; otherwise the first error of `cuEventSynchronize`, of a fence wait
    /// ([`Error::Timeout`], [`Error::GlCall`]) or of a recovery.
    pub fn wait_idle(&mut self) -> Result<()> {
        let timeout = self.timeout;
        for i in 0..self.slots.len() {
            let fns = self.fns;
            let slot = self.slot_checked(i, "glClientWaitSync (not called)")?;
            slot.wait_for_writes()?;
            slot.wait_for_reads(i, fns, timeout)?;
        }
        Ok(())
    }
}

fn out_of_range(slot: usize, len: usize) -> Error {
    Error::InvalidArgument(format!(
        "slot {slot} is out of range: the ring has {len} slots"
    ))
}

impl Drop for ExternalRing {
    fn drop(&mut self) {
        let Some(ctx) = self.slots.first().map(|s| s.memory.context().clone()) else {
            return;
        };
        // Deleting GL objects with another context current would delete that context's
        // objects of the same names; leaking them is harmless.
        let gl_current = match self.owner.check("glDeleteBuffers (not called)") {
            Ok(()) => true,
            Err(e) => {
                ctx.record_drop_error("deleting an external ring's GL objects (leaked instead)", e);
                false
            }
        };
        if gl_current && let Err(e) = self.wait_idle() {
            ctx.record_drop_error("waiting for an external ring's work", e);
        }
        for slot in self.slots.drain(..) {
            let Slot {
                read_fence,
                gl,
                memory,
                written,
                ..
            } = slot;
            if gl_current {
                drop(read_fence);
                drop(gl);
            } else {
                std::mem::forget(read_fence);
                std::mem::forget(gl);
            }
            // Waits for the CUDA context before unmapping; a leaked GL import keeps the
            // physical memory alive.
            drop(memory);
            drop(written);
        }
    }
}

/// CUDA's turn on one ring slot: hands out the slot's device pointer; finishing (or dropping)
/// records the slot's event on the stream given to [`ExternalRing::write`].
///
/// Leaking it (`mem::forget`) is safe: the ring's next call on the slot synchronizes the CUDA
/// context before GL may read it.
#[derive(Debug)]
#[must_use = "queue CUDA's writes to the slot, then finish the guard"]
pub struct CudaWrite<'a> {
    slot: &'a mut Slot,
    stream: sys::CUstream,
    done: bool,
}

impl fmt::Debug for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Slot")
            .field("gl_buffer", &self.gl.buffer())
            .field("bytes", &self.memory.requested_size())
            .field("access", &self.access)
            .field("write_pending", &self.write_pending)
            .field("read_fence", &self.read_fence.is_some())
            .finish_non_exhaustive()
    }
}

impl CudaWrite<'_> {
    /// The slot's device address, for kernel arguments. Queue the work on the stream given to
    /// [`ExternalRing::write`]: only that stream's work is covered by the slot's event.
    pub fn device_ptr(&self) -> DevicePtr<'_> {
        self.slot.memory.device_ptr()
    }

    /// The usable size of the slot in bytes.
    pub fn len(&self) -> usize {
        self.slot.memory.requested_size()
    }

    /// Whether the slot has no bytes (never true).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Records the slot's event on the stream: GL's next [`ExternalRing::read`] of the slot
    /// waits for it.
    ///
    /// # Errors
    /// The driver's error from `cuEventRecord`. The slot then stays marked as being written,
    /// and the ring's next call on it synchronizes the CUDA context.
    #[doc(alias = "cuEventRecord")]
    pub fn finish(mut self) -> Result<()> {
        self.done = true;
        self.record()
    }

    fn record(&mut self) -> Result<()> {
        self.slot.memory.context().bind()?;
        // SAFETY: the event and the stream are live (the stream is borrowed for 'a by
        // `ExternalRing::write`) and belong to the same context (checked there).
        unsafe { result::stream::event_record(self.slot.written.raw(), self.stream) }?;
        self.slot.write_pending = true;
        self.slot.access = Access::Idle;
        Ok(())
    }
}

impl Drop for CudaWrite<'_> {
    fn drop(&mut self) {
        if !self.done
            && let Err(e) = self.record()
        {
            self.slot
                .memory
                .context()
                .record_drop_error("recording an external ring slot's event", e);
        }
    }
}

/// GL's turn on one ring slot: hands out the slot's GL buffer; finishing (or dropping) places a
/// GL fence after the commands issued meanwhile, and flushes them.
///
/// Leaking it (`mem::forget`) is safe: the ring's next call on the slot places the fence, and
/// the next write of the slot waits for it. Neither `Send` nor `Sync`: the fence goes to the
/// context current on the calling thread.
#[must_use = "issue GL's reads of the buffer, then finish the guard"]
pub struct GlRead<'a> {
    slot: &'a mut Slot,
    fns: Fns,
    owner: GlOwner,
    done: bool,
    /// `!Send` and `!Sync`: GL calls go to the context current on the calling thread.
    _not_send: PhantomData<*const ()>,
}

impl fmt::Debug for GlRead<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GlRead")
            .field("slot", &self.slot)
            .finish_non_exhaustive()
    }
}

impl GlRead<'_> {
    /// The slot's GL buffer name.
    pub fn buffer(&self) -> u32 {
        self.slot.gl.buffer()
    }

    /// The usable size of the slot in bytes.
    pub fn len(&self) -> usize {
        self.slot.gl.size()
    }

    /// Whether the slot has no bytes (never true).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Places a fence after the GL commands issued so far (`glFenceSync`) and flushes them
    /// (`glFlush`): CUDA's next [`ExternalRing::write`] of the slot waits for the fence.
    ///
    /// # Errors
    /// [`Error::WrongGlContext`] or [`Error::NoGlContext`] when the ring's GL context is not
    /// current; [`Error::GlCall`] when `glFenceSync` fails. The slot then stays marked as being
    /// read, and the ring's next call on it places the fence.
    #[doc(alias = "glFenceSync")]
    pub fn finish(mut self) -> Result<()> {
        self.done = true;
        self.fence()
    }

    fn fence(&mut self) -> Result<()> {
        // A previous fence of this slot (two reads without a write between) is superseded: the
        // new one signals after it. Dropping it deletes it.
        self.slot.read_fence = Some(Fence::place(self.fns, self.owner)?);
        self.slot.access = Access::Idle;
        Ok(())
    }
}

impl Drop for GlRead<'_> {
    fn drop(&mut self) {
        if !self.done
            && let Err(e) = self.fence()
        {
            self.slot
                .memory
                .context()
                .record_drop_error("fencing an external ring slot's reads", e);
        }
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

    /// The converse, that `ExternalRing`, `GlMemoryBuffer` and `GlRead` are not `Send`, is
    /// checked by the compile-fail tests (`tests/ui/external_*_not_send.rs`).
    #[test]
    fn the_types_whose_drop_makes_no_gl_call_move_between_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<ExternalGl>();
        send_sync::<ExportableMemory>();
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
