//! The graphics-interop calls of the result layer: register, map, unmap and query GL resources.

use super::*;

/// As `drv!`, but the error stays a [`CudaError`]: these calls act on GL names and graphics
/// handles, so the driver has already loaded and a load failure can only read as
/// `CUDA_ERROR_NOT_INITIALIZED`.
macro_rules! gfx {
    ($name:ident ( $($arg:expr),* $(,)? )) => {
        check(
            stringify!($name),
            match sys::driver() {
                Ok(driver) => driver.$name($($arg),*),
                Err(_) => sys::CUresult::CUDA_ERROR_NOT_INITIALIZED,
            },
        )
    };
}

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
    // SAFETY: `r` is a valid out-pointer (1).
    unsafe { gfx!(cuGraphicsGLRegisterBuffer(&mut r, buffer, flags)) }.map(|()| r)
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
    // SAFETY: `r` is a valid out-pointer (1).
    unsafe { gfx!(cuGraphicsGLRegisterImage(&mut r, image, target, flags)) }.map(|()| r)
}

/// `cuGraphicsUnregisterResource`.
///
/// # Safety
/// 1. `r` is registered, unmapped, and not used after this call.
pub(crate) unsafe fn unregister(r: sys::CUgraphicsResource) -> Result<(), CudaError> {
    // SAFETY: (1).
    unsafe { gfx!(cuGraphicsUnregisterResource(r)) }
}

/// Defines `unsafe fn $fn(rs, stream)`: the driver's `$call` of every resource in `rs`, in one
/// call. Mapping and unmapping take the same arguments; their contracts are their own (`$doc`).
macro_rules! every_resource {
    ($(#[$doc:meta])* $fn:ident = $call:ident) => {
        $(#[$doc])*
        pub(crate) unsafe fn $fn(
            rs: &mut [sys::CUgraphicsResource],
            stream: sys::CUstream,
        ) -> Result<(), CudaError> {
            let count = rs.len() as c_uint;
            // SAFETY: the caller's contract (the function's `# Safety`); `count` is the slice's
            // length.
            unsafe { gfx!($call(count, rs.as_mut_ptr(), stream)) }
        }
    };
}

every_resource!(
    /// `cuGraphicsMapResources` of every resource in `rs`, in one call.
    ///
    /// # Safety
    /// 1. Every handle in `rs` is registered in the current context and unmapped.
    /// 2. `stream` is a live stream of the current context (or a special stream handle).
    map = cuGraphicsMapResources
);

every_resource!(
    /// `cuGraphicsUnmapResources` of every resource in `rs`, in one call.
    ///
    /// # Safety
    /// 1. Every handle in `rs` is mapped in the current context.
    /// 2. `stream` is live; it should be the stream they were mapped on.
    /// 3. No pointer, array or surface obtained from the mapping is used afterwards.
    unmap = cuGraphicsUnmapResources
);

/// `cuGraphicsResourceGetMappedPointer`: (device pointer, size).
///
/// # Safety
/// 1. `r` is a mapped buffer resource.
pub(crate) unsafe fn mapped_pointer(
    r: sys::CUgraphicsResource,
) -> Result<(sys::CUdeviceptr, usize), CudaError> {
    let (mut ptr, mut size) = (0, 0);
    // SAFETY: (1); both out-pointers are valid.
    unsafe {
        gfx!(cuGraphicsResourceGetMappedPointer_v2(
            &mut ptr, &mut size, r
        ))
    }
    .map(|()| (ptr, size))
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
    let mut a = std::ptr::null_mut();
    // SAFETY: (1); the out-pointer is valid.
    unsafe { gfx!(cuGraphicsSubResourceGetMappedArray(&mut a, r, index, level)) }.map(|()| a)
}

/// `cuGraphicsResourceGetMappedMipmappedArray`.
///
/// # Safety
/// 1. `r` is a mapped image resource.
pub(crate) unsafe fn mapped_mipmapped_array(
    r: sys::CUgraphicsResource,
) -> Result<sys::CUmipmappedArray, CudaError> {
    let mut a = std::ptr::null_mut();
    // SAFETY: (1); the out-pointer is valid.
    unsafe { gfx!(cuGraphicsResourceGetMappedMipmappedArray(&mut a, r)) }.map(|()| a)
}

/// `cuGraphicsResourceSetMapFlags`.
///
/// # Safety
/// 1. `r` is registered and unmapped.
pub(crate) unsafe fn set_map_flags(
    r: sys::CUgraphicsResource,
    flags: c_uint,
) -> Result<(), CudaError> {
    // SAFETY: (1).
    unsafe { gfx!(cuGraphicsResourceSetMapFlags_v2(r, flags)) }
}
