//! The virtual memory management calls of the result layer: physical allocations, address
//! ranges, mappings, access, and export as a POSIX file descriptor.

use super::*;

/// `cuMemGetAllocationGranularity`, the recommended granularity for `prop`.
pub(crate) fn granularity(prop: &sys::CUmemAllocationProp) -> Result<usize> {
    let mut granularity = 0usize;
    // SAFETY: both pointers are valid for the call.
    unsafe {
        drv!(cuMemGetAllocationGranularity(
            &mut granularity,
            prop,
            sys::CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_RECOMMENDED
        ))
    }?;
    Ok(granularity)
}

/// `cuMemCreate`: a physical allocation of `size` bytes described by `prop`. The driver
/// rejects a `size` that is not a multiple of [`granularity`]. The handle is released with
/// [`release`].
pub(crate) fn create(
    size: usize,
    prop: &sys::CUmemAllocationProp,
) -> Result<sys::CUmemGenericAllocationHandle> {
    let mut handle = 0;
    // SAFETY: `handle` is a valid out-pointer and `prop` a valid descriptor; no flags.
    unsafe { drv!(cuMemCreate(&mut handle, size, prop, 0)) }.map(|()| handle)
}

/// `cuMemAddressReserve`: a virtual address range of `size` bytes, at no fixed address or
/// alignment. It is freed with [`address_free`].
pub(crate) fn address_reserve(size: usize) -> Result<sys::CUdeviceptr> {
    let mut ptr = 0;
    // SAFETY: `ptr` is a valid out-pointer; no fixed address or alignment is asked for.
    unsafe { drv!(cuMemAddressReserve(&mut ptr, size, 0, 0, 0)) }.map(|()| ptr)
}

/// `cuMemMap`: maps all of `handle` at `ptr`.
///
/// # Safety
/// 1. `[ptr, ptr + size)` was reserved by [`address_reserve`] and is not mapped.
/// 2. `handle` came from [`create`], is not released, and is `size` bytes long.
pub(crate) unsafe fn map(
    ptr: sys::CUdeviceptr,
    size: usize,
    handle: sys::CUmemGenericAllocationHandle,
) -> Result<()> {
    // SAFETY: (1), (2); offset 0 and no flags.
    unsafe { drv!(cuMemMap(ptr, size, 0, handle, 0)) }
}

/// `cuMemSetAccess` with one access descriptor.
///
/// # Safety
/// 1. `[ptr, ptr + size)` is mapped by [`map`].
pub(crate) unsafe fn set_access(
    ptr: sys::CUdeviceptr,
    size: usize,
    access: &sys::CUmemAccessDesc,
) -> Result<()> {
    // SAFETY: (1); one access descriptor is passed.
    unsafe { drv!(cuMemSetAccess(ptr, size, access, 1)) }
}

/// `cuMemExportToShareableHandle` as a POSIX file descriptor, which the caller owns.
///
/// # Safety
/// 1. `handle` came from [`create`] with `CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR` among
///    its requested handle types, and is not released.
pub(crate) unsafe fn export_fd(handle: sys::CUmemGenericAllocationHandle) -> Result<c_int> {
    let mut fd: c_int = -1;
    // SAFETY: for POSIX file descriptor handles the out-pointer is an `int`; the handle is
    // live and was created with that handle type requested (1).
    unsafe {
        drv!(cuMemExportToShareableHandle(
            (&raw mut fd).cast(),
            handle,
            sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
            0
        ))
    }?;
    Ok(fd)
}

/// `cuMemUnmap`.
///
/// # Safety
/// 1. `[ptr, ptr + size)` is the whole range mapped by one [`map`], unmapped once.
/// 2. No pending work and no pointer uses the range after this call.
pub(crate) unsafe fn unmap(ptr: sys::CUdeviceptr, size: usize) -> Result<()> {
    // SAFETY: (1), (2).
    unsafe { drv!(cuMemUnmap(ptr, size)) }
}

/// `cuMemAddressFree`.
///
/// # Safety
/// 1. `[ptr, ptr + size)` is the whole range from one [`address_reserve`], unmapped, and
///    freed once.
pub(crate) unsafe fn address_free(ptr: sys::CUdeviceptr, size: usize) -> Result<()> {
    // SAFETY: (1).
    unsafe { drv!(cuMemAddressFree(ptr, size)) }
}

/// `cuMemRelease`.
///
/// # Safety
/// 1. `handle` came from [`create`] and is released once.
pub(crate) unsafe fn release(handle: sys::CUmemGenericAllocationHandle) -> Result<()> {
    // SAFETY: (1).
    unsafe { drv!(cuMemRelease(handle)) }
}
