//! The CUDA array calls of the result layer: descriptors, mipmap levels, 2D/3D copies, surface and
//! texture objects.

use super::*;

/// `cuArray3DGetDescriptor`.
///
/// # Safety
/// 1. `a` is a live array.
pub(crate) unsafe fn descriptor(a: sys::CUarray) -> Result<sys::CUDA_ARRAY3D_DESCRIPTOR> {
    let mut d = sys::CUDA_ARRAY3D_DESCRIPTOR::default();
    // SAFETY: (1); the out-pointer is valid.
    unsafe { drv!(cuArray3DGetDescriptor_v2(&mut d, a)) }.map(|()| d)
}

/// `cuArray3DCreate` of a 2-D array (`Depth` 0) described by `desc`.
///
/// # Safety
/// 1. A context is current.
pub(crate) unsafe fn create(desc: &sys::CUDA_ARRAY3D_DESCRIPTOR) -> Result<sys::CUarray> {
    let mut a = std::ptr::null_mut();
    // SAFETY: (1); `desc` outlives the call; the out-pointer is valid.
    unsafe { drv!(cuArray3DCreate_v2(&mut a, desc)) }.map(|()| a)
}

/// `cuArrayDestroy`.
///
/// # Safety
/// 1. `a` came from [`create`], is destroyed once, and no surface or texture object over it
///    is used after this call.
pub(crate) unsafe fn destroy(a: sys::CUarray) -> Result<()> {
    // SAFETY: (1).
    unsafe { drv!(cuArrayDestroy(a)) }
}

/// `cuMipmappedArrayGetLevel`.
///
/// # Safety
/// 1. `m` is a live mipmapped array.
pub(crate) unsafe fn mipmap_level(m: sys::CUmipmappedArray, level: c_uint) -> Result<sys::CUarray> {
    let mut a = std::ptr::null_mut();
    // SAFETY: (1); the out-pointer is valid.
    unsafe { drv!(cuMipmappedArrayGetLevel(&mut a, m, level)) }.map(|()| a)
}

/// `cuMemcpy2DAsync`.
///
/// # Safety
/// 1. Every host address, device address and array in `copy` is live, spans the region
///    `copy` describes, and stays so until the copy has completed on `s`; the destination
///    may be written.
/// 2. `s` is a live stream of the current context.
pub(crate) unsafe fn copy_2d_async(copy: &sys::CUDA_MEMCPY2D, s: sys::CUstream) -> Result<()> {
    #[cfg(test)]
    crate::result::test_ops::note(crate::result::test_ops::Op::Copy {
        stream: s,
        src: match copy.srcMemoryType {
            sys::CUmemorytype::CU_MEMORYTYPE_DEVICE => copy.srcDevice,
            _ => 0,
        },
    });
    // SAFETY: (1), (2); `copy` is a complete descriptor that outlives the call.
    unsafe { drv!(cuMemcpy2DAsync_v2(copy, s)) }
}

/// `cuMemcpy3DAsync` (3-D and layered arrays).
///
/// # Safety
/// As [`copy_2d_async`].
pub(crate) unsafe fn copy_3d_async(copy: &sys::CUDA_MEMCPY3D, s: sys::CUstream) -> Result<()> {
    // SAFETY: as `copy_2d_async` (1), (2); `copy` is a complete descriptor.
    unsafe { drv!(cuMemcpy3DAsync_v2(copy, s)) }
}

/// `cuSurfObjectCreate` over a whole array.
///
/// # Safety
/// 1. `a` is live (and outlives the surface object), created with surface load/store.
pub(crate) unsafe fn surface_create(a: sys::CUarray) -> Result<sys::CUsurfObject> {
    let desc = whole_array(a);
    let mut s = 0;
    // SAFETY: (1); `desc` describes the array; the out-pointer is valid.
    unsafe { drv!(cuSurfObjectCreate(&mut s, &desc)) }.map(|()| s)
}

/// `cuSurfObjectDestroy`.
///
/// # Safety
/// 1. `s` is live and no pending work uses it after this call.
pub(crate) unsafe fn surface_destroy(s: sys::CUsurfObject) -> Result<()> {
    // SAFETY: (1).
    unsafe { drv!(cuSurfObjectDestroy(s)) }
}

/// `cuTexObjectCreate` over a whole array.
///
/// # Safety
/// 1. `a` is live and outlives the texture object.
pub(crate) unsafe fn texture_create(
    a: sys::CUarray,
    tex: &sys::CUDA_TEXTURE_DESC,
) -> Result<sys::CUtexObject> {
    let desc = whole_array(a);
    let mut t = 0;
    // SAFETY: (1); the descriptors are valid; the out-pointer is valid.
    unsafe { drv!(cuTexObjectCreate(&mut t, &desc, tex, std::ptr::null())) }.map(|()| t)
}

/// `cuTexObjectDestroy`.
///
/// # Safety
/// 1. `t` is live and no pending work uses it after this call.
pub(crate) unsafe fn texture_destroy(t: sys::CUtexObject) -> Result<()> {
    // SAFETY: (1).
    unsafe { drv!(cuTexObjectDestroy(t)) }
}

/// The resource descriptor of the whole of array `a`, as surface and texture objects take it.
fn whole_array(a: sys::CUarray) -> sys::CUDA_RESOURCE_DESC {
    let mut desc = sys::CUDA_RESOURCE_DESC {
        resType: sys::CUresourcetype::CU_RESOURCE_TYPE_ARRAY,
        ..Default::default()
    };
    desc.res.array.hArray = a;
    desc
}
