//! The graphics-interop calls of the result layer: register, map, unmap and query GL resources.

use super::*;

/// `cuGraphicsGLRegisterBuffer` in the current CUDA context.
///
/// # Safety
/// 1. A GL context is current on this thread or the call fails cleanly; no other
///    precondition. Marked unsafe because the returned handle must be unregistered exactly
///    once.
pub(crate) unsafe fn register_buffer(
    buffer: c_uint,
    flags: c_uint,
) -> Result<sys::CUgraphicsResource, CudaError> {
    let mut r = std::ptr::null_mut();
    let driver = sys::driver().map_err(|_| load_lost("cuGraphicsGLRegisterBuffer"))?;
    // SAFETY: `r` is a valid out-pointer (1).
    let rc = unsafe { driver.cuGraphicsGLRegisterBuffer(&mut r, buffer, flags) };
    check("cuGraphicsGLRegisterBuffer", rc).map(|()| r)
}

/// `cuGraphicsGLRegisterImage` in the current CUDA context.
///
/// # Safety
/// As [`register_buffer`].
pub(crate) unsafe fn register_image(
    image: c_uint,
    target: c_uint,
    flags: c_uint,
) -> Result<sys::CUgraphicsResource, CudaError> {
    let mut r = std::ptr::null_mut();
    let driver = sys::driver().map_err(|_| load_lost("cuGraphicsGLRegisterImage"))?;
    // SAFETY: `r` is a valid out-pointer (1).
    let rc = unsafe { driver.cuGraphicsGLRegisterImage(&mut r, image, target, flags) };
    check("cuGraphicsGLRegisterImage", rc).map(|()| r)
}

/// `cuGraphicsUnregisterResource`.
///
/// # Safety
/// 1. `r` is registered, unmapped, and not used after this call.
pub(crate) unsafe fn unregister(r: sys::CUgraphicsResource) -> Result<(), CudaError> {
    let driver = sys::driver().map_err(|_| load_lost("cuGraphicsUnregisterResource"))?;
    // SAFETY: (1).
    let rc = unsafe { driver.cuGraphicsUnregisterResource(r) };
    check("cuGraphicsUnregisterResource", rc)
}

/// `cuGraphicsMapResources` of every resource in `rs`, in one call.
///
/// # Safety
/// 1. Every handle in `rs` is registered in the current context and unmapped.
/// 2. `stream` is a live stream of the current context (or a special stream handle).
pub(crate) unsafe fn map(
    rs: &mut [sys::CUgraphicsResource],
    stream: sys::CUstream,
) -> Result<(), CudaError> {
    let driver = sys::driver().map_err(|_| load_lost("cuGraphicsMapResources"))?;
    // SAFETY: (1), (2); the slice length is the count passed.
    let rc = unsafe { driver.cuGraphicsMapResources(rs.len() as c_uint, rs.as_mut_ptr(), stream) };
    check("cuGraphicsMapResources", rc)
}

/// `cuGraphicsUnmapResources` of every resource in `rs`, in one call.
///
/// # Safety
/// 1. Every handle in `rs` is mapped in the current context.
/// 2. `stream` is live; it should be the stream they were mapped on.
/// 3. No pointer, array or surface obtained from the mapping is used afterwards.
pub(crate) unsafe fn unmap(
    rs: &mut [sys::CUgraphicsResource],
    stream: sys::CUstream,
) -> Result<(), CudaError> {
    let driver = sys::driver().map_err(|_| load_lost("cuGraphicsUnmapResources"))?;
    // SAFETY: (1), (2), (3); the slice length is the count passed.
    let rc =
        unsafe { driver.cuGraphicsUnmapResources(rs.len() as c_uint, rs.as_mut_ptr(), stream) };
    check("cuGraphicsUnmapResources", rc)
}

/// `cuGraphicsResourceGetMappedPointer`: (device pointer, size).
///
/// # Safety
/// 1. `r` is a mapped buffer resource.
pub(crate) unsafe fn mapped_pointer(
    r: sys::CUgraphicsResource,
) -> Result<(sys::CUdeviceptr, usize), CudaError> {
    let driver = sys::driver().map_err(|_| load_lost("cuGraphicsResourceGetMappedPointer"))?;
    let (mut ptr, mut size) = (0, 0);
    // SAFETY: (1); both out-pointers are valid.
    let rc = unsafe { driver.cuGraphicsResourceGetMappedPointer_v2(&mut ptr, &mut size, r) };
    check("cuGraphicsResourceGetMappedPointer", rc).map(|()| (ptr, size))
}

/// `cuGraphicsSubResourceGetMappedArray`.
///
/// # Safety
/// 1. `r` is a mapped image resource.
pub(crate) unsafe fn mapped_array(
    r: sys::CUgraphicsResource,
    index: c_uint,
    level: c_uint,
) -> Result<sys::CUarray, CudaError> {
    let driver = sys::driver().map_err(|_| load_lost("cuGraphicsSubResourceGetMappedArray"))?;
    let mut a = std::ptr::null_mut();
    // SAFETY: (1); the out-pointer is valid.
    let rc = unsafe { driver.cuGraphicsSubResourceGetMappedArray(&mut a, r, index, level) };
    check("cuGraphicsSubResourceGetMappedArray", rc).map(|()| a)
}

/// `cuGraphicsResourceGetMappedMipmappedArray`.
///
/// # Safety
/// 1. `r` is a mapped image resource.
pub(crate) unsafe fn mapped_mipmapped_array(
    r: sys::CUgraphicsResource,
) -> Result<sys::CUmipmappedArray, CudaError> {
    let driver =
        sys::driver().map_err(|_| load_lost("cuGraphicsResourceGetMappedMipmappedArray"))?;
    let mut a = std::ptr::null_mut();
    // SAFETY: (1); the out-pointer is valid.
    let rc = unsafe { driver.cuGraphicsResourceGetMappedMipmappedArray(&mut a, r) };
    check("cuGraphicsResourceGetMappedMipmappedArray", rc).map(|()| a)
}

/// `cuGraphicsResourceSetMapFlags`.
///
/// # Safety
/// 1. `r` is registered and unmapped.
pub(crate) unsafe fn set_map_flags(
    r: sys::CUgraphicsResource,
    flags: c_uint,
) -> Result<(), CudaError> {
    let driver = sys::driver().map_err(|_| load_lost("cuGraphicsResourceSetMapFlags"))?;
    // SAFETY: (1).
    let rc = unsafe { driver.cuGraphicsResourceSetMapFlags_v2(r, flags) };
    check("cuGraphicsResourceSetMapFlags", rc)
}

/// A handle exists, so the driver loaded; this only guards the impossible case.
fn load_lost(call: &'static str) -> CudaError {
    CudaError::new(call, sys::CUresult::CUDA_ERROR_NOT_INITIALIZED)
}
