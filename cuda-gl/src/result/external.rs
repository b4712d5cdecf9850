//! The external resource calls of the result layer: memory and semaphores that another API
//! (Vulkan) allocated and exported as POSIX file descriptors, imported into CUDA.

use super::*;
use std::os::fd::{AsRawFd, IntoRawFd, OwnedFd, RawFd};

/// `cuImportExternalMemory` of an `OPAQUE_FD` export of `size` bytes; `dedicated` when the
/// memory is a dedicated allocation of one image or buffer (`CUDA_EXTERNAL_MEMORY_DEDICATED`).
///
/// The driver takes the descriptor on success; on failure it is closed here (the `OwnedFd`
/// drops), so it never leaks and is never closed twice.
///
/// # Safety
/// 1. `fd` was exported from memory of at least `size` bytes, with `dedicated` matching how it
///    was allocated; a context is current.
pub(crate) unsafe fn import_memory_fd(
    fd: OwnedFd,
    size: u64,
    dedicated: bool,
) -> Result<sys::CUexternalMemory> {
    import_fd(fd, |raw_fd| {
        let mut desc = sys::CUDA_EXTERNAL_MEMORY_HANDLE_DESC {
            type_: sys::CUexternalMemoryHandleType::CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD,
            size,
            flags: if dedicated {
                sys::CUDA_EXTERNAL_MEMORY_DEDICATED
            } else {
                0
            },
            ..Default::default()
        };
        desc.handle.fd = raw_fd;
        let mut out = std::ptr::null_mut();
        // SAFETY: (1); `desc` is a complete descriptor and `out` a valid out-pointer.
        unsafe { drv!(cuImportExternalMemory(&mut out, &desc)) }.map(|()| out)
    })
}

/// Runs `import` (a `cuImportExternal*` call) on the raw descriptor of `fd`. On success the
/// driver owns the descriptor (CUDA driver API reference, "Ownership of the file descriptor is
/// transferred to the CUDA driver when the handle is imported successfully"), so it is released
/// here, not closed; on failure `fd` drops, which closes it.
fn import_fd<T>(fd: OwnedFd, import: impl FnOnce(RawFd) -> Result<T>) -> Result<T> {
    let imported = import(fd.as_raw_fd())?;
    let _ = fd.into_raw_fd();
    Ok(imported)
}

/// `cuExternalMemoryGetMappedMipmappedArray` at offset 0, described by `array` with `levels`
/// mip levels. The array is freed with [`mipmapped_array_destroy`].
///
/// # Safety
/// 1. `mem` is live; `array` and `levels` describe the image the memory holds (the driver
///    checks the size, not the layout).
pub(crate) unsafe fn mapped_mipmapped_array(
    mem: sys::CUexternalMemory,
    array: sys::CUDA_ARRAY3D_DESCRIPTOR,
    levels: c_uint,
) -> Result<sys::CUmipmappedArray> {
    let desc = sys::CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC {
        offset: 0,
        arrayDesc: array,
        numLevels: levels,
        ..Default::default()
    };
    let mut out = std::ptr::null_mut();
    // SAFETY: (1); `desc` outlives the call; `out` is a valid out-pointer.
    unsafe {
        drv!(cuExternalMemoryGetMappedMipmappedArray(
            &mut out, mem, &desc
        ))
    }
    .map(|()| out)
}

/// `cuMipmappedArrayDestroy`.
///
/// # Safety
/// 1. `m` came from [`mapped_mipmapped_array`], is destroyed once, and no pending work, surface
///    or texture object uses it (or one of its levels) after this call.
pub(crate) unsafe fn mipmapped_array_destroy(m: sys::CUmipmappedArray) -> Result<()> {
    // SAFETY: (1).
    unsafe { drv!(cuMipmappedArrayDestroy(m)) }
}

/// `cuDestroyExternalMemory`.
///
/// # Safety
/// 1. `mem` came from [`import_memory_fd`], is destroyed once, and every array mapped from it
///    was destroyed first ("must be explicitly freed", CUDA driver API reference).
pub(crate) unsafe fn destroy_memory(mem: sys::CUexternalMemory) -> Result<()> {
    // SAFETY: (1).
    unsafe { drv!(cuDestroyExternalMemory(mem)) }
}

/// `cuImportExternalSemaphore` of a timeline semaphore exported as an `OPAQUE_FD`
/// (`CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD`). As with memory, the driver takes
/// the descriptor on success and it is closed here on failure.
///
/// # Safety
/// 1. `fd` was exported from a timeline semaphore; a context is current.
pub(crate) unsafe fn import_timeline_semaphore_fd(fd: OwnedFd) -> Result<sys::CUexternalSemaphore> {
    import_fd(fd, |raw_fd| {
        let mut desc = sys::CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC {
            type_: sys::CUexternalSemaphoreHandleType::CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD,
            ..Default::default()
        };
        desc.handle.fd = raw_fd;
        let mut out = std::ptr::null_mut();
        // SAFETY: (1); `desc` is complete and `out` a valid out-pointer.
        unsafe { drv!(cuImportExternalSemaphore(&mut out, &desc)) }.map(|()| out)
    })
}

/// `cuSignalExternalSemaphoresAsync`: sets timeline semaphore `sem` to `value` once the work
/// queued on `s` before it is done.
///
/// # Safety
/// 1. `sem` came from [`import_timeline_semaphore_fd`] and stays live until the signal has run;
///    `s` is a live stream of the current context.
pub(crate) unsafe fn signal_semaphore(
    sem: sys::CUexternalSemaphore,
    value: u64,
    s: sys::CUstream,
) -> Result<()> {
    let mut params = sys::CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS::default();
    params.params.fence.value = value;
    // SAFETY: (1); one semaphore and one parameter block, both outliving the call.
    unsafe { drv!(cuSignalExternalSemaphoresAsync(&sem, &params, 1, s)) }
}

/// `cuWaitExternalSemaphoresAsync`: work queued on `s` after it waits until timeline semaphore
/// `sem` reaches `value`.
///
/// # Safety
/// 1. As [`signal_semaphore`] (1); some queued or later signal reaches `value`, or the stream
///    waits forever.
pub(crate) unsafe fn wait_semaphore(
    sem: sys::CUexternalSemaphore,
    value: u64,
    s: sys::CUstream,
) -> Result<()> {
    // SAFETY: (1).
    unsafe { wait_semaphores([(sem, value)], s) }
}

/// `cuWaitExternalSemaphoresAsync` of several semaphores at once: work queued on `s` after it
/// waits until each timeline semaphore reaches its value. On an error, any of the waits may
/// have been queued.
///
/// # Safety
/// 1. As [`wait_semaphore`] (1), for each semaphore and value.
pub(crate) unsafe fn wait_semaphores<const N: usize>(
    waits: [(sys::CUexternalSemaphore, u64); N],
    s: sys::CUstream,
) -> Result<()> {
    let sems = waits.map(|(sem, _)| sem);
    let params = waits.map(|(_, value)| {
        let mut params = sys::CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS::default();
        params.params.fence.value = value;
        params
    });
    // Checked when the function is instantiated: no group holds more semaphores than that.
    const { assert!(N <= c_uint::MAX as usize) };
    let count = N as c_uint;
    // SAFETY: (1); `count` semaphores and as many parameter blocks, all outliving the call.
    unsafe {
        drv!(cuWaitExternalSemaphoresAsync(
            sems.as_ptr(),
            params.as_ptr(),
            count,
            s
        ))
    }
}

/// `cuDestroyExternalSemaphore`.
///
/// # Safety
/// 1. `sem` came from [`import_timeline_semaphore_fd`], is destroyed once, and no pending work
///    waits on or signals it.
pub(crate) unsafe fn destroy_semaphore(sem: sys::CUexternalSemaphore) -> Result<()> {
    // SAFETY: (1).
    unsafe { drv!(cuDestroyExternalSemaphore(sem)) }
}
