//! The linear-memory calls of the result layer: device and pinned allocations, copies between
//! host and device, and memset.

use super::*;

/// `cuMemsetD8Async`: queues setting `bytes` bytes from `ptr` to `value` on `stream`.
///
/// # Safety
/// 1. `[ptr, ptr + bytes)` is device memory of the current context that stays allocated until
///    the set has run.
/// 2. `stream` is a live stream of the current context (or a special stream handle).
pub(crate) unsafe fn memset_d8_async(
    ptr: sys::CUdeviceptr,
    value: u8,
    bytes: usize,
    stream: sys::CUstream,
) -> Result<()> {
    // SAFETY: (1), (2).
    unsafe { drv!(cuMemsetD8Async(ptr, value, bytes, stream)) }
}

/// `cuMemAlloc`: `bytes` bytes of device memory in the current context, uninitialised. The
/// allocation is released with [`free`].
pub(crate) fn alloc(bytes: usize) -> Result<sys::CUdeviceptr> {
    let mut raw = 0;
    // SAFETY: `raw` is a valid out-pointer.
    unsafe { drv!(cuMemAlloc_v2(&mut raw, bytes)) }.map(|()| raw)
}

/// `cuMemFree`.
///
/// # Safety
/// 1. `ptr` came from [`alloc`] and is not used after this call.
pub(crate) unsafe fn free(ptr: sys::CUdeviceptr) -> Result<()> {
    // SAFETY: (1).
    unsafe { drv!(cuMemFree_v2(ptr)) }
}

/// `cuMemAllocHost`: `bytes` bytes of page-locked host memory, uninitialised. The allocation
/// is released with [`free_host`].
pub(crate) fn alloc_host(bytes: usize) -> Result<*mut c_void> {
    let mut ptr = std::ptr::null_mut();
    // SAFETY: `ptr` is a valid out-pointer.
    unsafe { drv!(cuMemAllocHost_v2(&mut ptr, bytes)) }.map(|()| ptr)
}

/// `cuMemFreeHost`.
///
/// # Safety
/// 1. `ptr` came from [`alloc_host`], no copy reads or writes it any more, and it is not used
///    after this call.
pub(crate) unsafe fn free_host(ptr: *mut c_void) -> Result<()> {
    // SAFETY: (1).
    unsafe { drv!(cuMemFreeHost(ptr)) }
}

/// `cuMemcpyHtoD`: copies `bytes` bytes from host `src` to device `dst`, on the legacy default
/// stream; for pageable `src` the call returns once `src` has been read.
///
/// # Safety
/// 1. `[dst, dst + bytes)` is device memory of the current context.
/// 2. `src` is valid for reads of `bytes` bytes.
pub(crate) unsafe fn copy_htod(
    dst: sys::CUdeviceptr,
    src: *const c_void,
    bytes: usize,
) -> Result<()> {
    // SAFETY: (1), (2).
    unsafe { drv!(cuMemcpyHtoD_v2(dst, src, bytes)) }
}

/// `cuMemcpyHtoDAsync`: queues a copy of `bytes` bytes from host `src` to device `dst` on
/// `stream`.
///
/// # Safety
/// 1. `[dst, dst + bytes)` is device memory of the current context that stays allocated until
///    the copy has run.
/// 2. `src` is valid for reads of `bytes` bytes, unchanged, until the copy has run (for
///    pageable memory too: CUDA does not document that its source was read, or staged, when
///    the call returns).
/// 3. `stream` is a live stream of the current context (or a special stream handle).
pub(crate) unsafe fn copy_htod_async(
    dst: sys::CUdeviceptr,
    src: *const c_void,
    bytes: usize,
    stream: sys::CUstream,
) -> Result<()> {
    // SAFETY: (1), (2), (3).
    unsafe { drv!(cuMemcpyHtoDAsync_v2(dst, src, bytes, stream)) }
}

/// `cuMemcpyDtoH`: copies `bytes` bytes from device `src` to host `dst`, on the legacy default
/// stream; a copy to pageable memory has finished when the call returns.
///
/// # Safety
/// 1. `[src, src + bytes)` is device memory of the current context.
/// 2. `dst` is valid for writes of `bytes` bytes.
pub(crate) unsafe fn copy_dtoh(
    dst: *mut c_void,
    src: sys::CUdeviceptr,
    bytes: usize,
) -> Result<()> {
    // SAFETY: (1), (2).
    unsafe { drv!(cuMemcpyDtoH_v2(dst, src, bytes)) }
}

/// `cuMemcpyDtoHAsync`: queues a copy of `bytes` bytes from device `src` to host `dst` on
/// `stream`.
///
/// # Safety
/// 1. `[src, src + bytes)` is device memory of the current context that stays allocated until
///    the copy has run.
/// 2. `dst` is valid for writes of `bytes` bytes, and nothing else reads or writes or frees it,
///    until the copy has finished.
/// 3. `stream` is a live stream of the current context (or a special stream handle).
pub(crate) unsafe fn copy_dtoh_async(
    dst: *mut c_void,
    src: sys::CUdeviceptr,
    bytes: usize,
    stream: sys::CUstream,
) -> Result<()> {
    // SAFETY: (1), (2), (3).
    unsafe { drv!(cuMemcpyDtoHAsync_v2(dst, src, bytes, stream)) }
}
