//! The result layer: one function per driver call, returning [`CudaError`] instead of a raw code.
//!
//! Each function is `unsafe` where the C call has preconditions the types cannot express; they
//! are listed, numbered, under `# Safety`. The safe types in the rest of the crate uphold them.

use crate::error::{CudaError, Result};
use cuda_gl_sys as sys;
use std::ffi::{CStr, c_void};
use std::os::raw::{c_char, c_int, c_uint};

/// Calls `$name` on the loaded driver and turns its code into a `Result`.
macro_rules! drv {
    ($name:ident ( $($arg:expr),* $(,)? )) => {
        match cuda_gl_sys::driver() {
            Ok(driver) => $crate::result::check(stringify!($name), driver.$name($($arg),*))
                .map_err($crate::error::Error::from),
            Err(e) => Err::<(), $crate::error::Error>($crate::error::Error::from(e)),
        }
    };
}

/// Maps a raw code to `Ok(())` or a [`CudaError`] naming `call`.
///
/// The `_v2` suffix the 12.0 headers add is stripped so errors name the documented entry point.
pub(crate) fn check(call: &'static str, rc: sys::CUresult) -> Result<(), CudaError> {
    if rc.is_success() {
        Ok(())
    } else {
        let call = call.strip_suffix("_v2").unwrap_or(call);
        Err(CudaError::new(call, rc))
    }
}

/// `cuInit(0)`, once per process; later calls return the first outcome.
pub(crate) fn init() -> Result<()> {
    static INIT: std::sync::OnceLock<Result<(), CudaError>> = std::sync::OnceLock::new();
    let driver = sys::driver()?;
    INIT.get_or_init(|| {
        // SAFETY: cuInit has no preconditions and may be called from any thread, repeatedly.
        let rc = unsafe { driver.cuInit(0) };
        check("cuInit", rc)
    })
    .clone()
    .map_err(Into::into)
}

pub(crate) mod device {
    use super::*;

    /// `cuDeviceGetCount`.
    pub(crate) fn count() -> Result<i32> {
        init()?;
        let mut n = 0;
        // SAFETY: `n` is a valid out-pointer; the driver is initialised.
        unsafe { drv!(cuDeviceGetCount(&mut n)) }?;
        Ok(n)
    }

    /// `cuDeviceGet`.
    pub(crate) fn get(ordinal: i32) -> Result<sys::CUdevice> {
        init()?;
        let mut dev = 0;
        // SAFETY: `dev` is a valid out-pointer; the driver is initialised.
        unsafe { drv!(cuDeviceGet(&mut dev, ordinal)) }?;
        Ok(dev)
    }

    /// `cuDeviceGetName`.
    pub(crate) fn name(dev: sys::CUdevice) -> Result<String> {
        let mut buf = [0 as c_char; 256];
        // SAFETY: the buffer is 256 bytes long and the driver writes at most `len` bytes.
        unsafe { drv!(cuDeviceGetName(buf.as_mut_ptr(), buf.len() as c_int, dev)) }?;
        // SAFETY: the driver NUL-terminates the name within the buffer.
        Ok(unsafe { CStr::from_ptr(buf.as_ptr()) }
            .to_string_lossy()
            .into_owned())
    }

    /// `cuDeviceGetPCIBusId`.
    pub(crate) fn pci_bus_id(dev: sys::CUdevice) -> Result<String> {
        let mut buf = [0 as c_char; 64];
        // SAFETY: the buffer is 64 bytes long and the driver writes at most `len` bytes.
        unsafe {
            drv!(cuDeviceGetPCIBusId(
                buf.as_mut_ptr(),
                buf.len() as c_int,
                dev
            ))
        }?;
        // SAFETY: the driver NUL-terminates the id within the buffer.
        Ok(unsafe { CStr::from_ptr(buf.as_ptr()) }
            .to_string_lossy()
            .into_owned())
    }

    /// `cuDeviceGetAttribute`.
    pub(crate) fn attribute(dev: sys::CUdevice, attr: sys::CUdevice_attribute) -> Result<i32> {
        let mut v = 0;
        // SAFETY: `v` is a valid out-pointer.
        unsafe { drv!(cuDeviceGetAttribute(&mut v, attr, dev)) }?;
        Ok(v)
    }

    /// `cuDeviceTotalMem`.
    pub(crate) fn total_mem(dev: sys::CUdevice) -> Result<usize> {
        let mut v = 0;
        // SAFETY: `v` is a valid out-pointer.
        unsafe { drv!(cuDeviceTotalMem_v2(&mut v, dev)) }?;
        Ok(v)
    }

    /// `cuDeviceGetUuid`: the device's 16-byte UUID.
    pub(crate) fn uuid(dev: sys::CUdevice) -> Result<[u8; 16]> {
        let mut uuid = sys::CUuuid::default();
        // SAFETY: `uuid` is a valid out-pointer; the device handle came from the driver.
        unsafe { drv!(cuDeviceGetUuid_v2(&mut uuid, dev)) }?;
        Ok(uuid.bytes.map(|b| b as u8))
    }

    /// `cuGLGetDevices`: the CUDA devices behind the GL context current on this thread.
    pub(crate) fn gl_devices(list: sys::CUGLDeviceList) -> Result<Vec<sys::CUdevice>> {
        init()?;
        let mut devices = [0 as sys::CUdevice; 16];
        let mut n: c_uint = 0;
        // SAFETY: `devices` holds 16 entries and the driver writes at most `cudaDeviceCount`
        // (16) of them; `n` is a valid out-pointer.
        unsafe {
            drv!(cuGLGetDevices_v2(
                &mut n,
                devices.as_mut_ptr(),
                devices.len() as c_uint,
                list
            ))
        }?;
        Ok(devices[..(n as usize).min(devices.len())].to_vec())
    }
}

pub(crate) mod ctx {
    use super::*;

    /// `cuDevicePrimaryCtxRetain`.
    pub(crate) fn primary_retain(dev: sys::CUdevice) -> Result<sys::CUcontext> {
        let mut ctx = std::ptr::null_mut();
        // SAFETY: `ctx` is a valid out-pointer; `dev` came from cuDeviceGet.
        unsafe { drv!(cuDevicePrimaryCtxRetain(&mut ctx, dev)) }?;
        Ok(ctx)
    }

    /// `cuDevicePrimaryCtxRelease`.
    ///
    /// # Safety
    /// 1. Each call must balance one earlier successful `primary_retain` of `dev`.
    pub(crate) unsafe fn primary_release(dev: sys::CUdevice) -> Result<()> {
        // SAFETY: the caller balances a retain (1).
        unsafe { drv!(cuDevicePrimaryCtxRelease_v2(dev)) }?;
        Ok(())
    }

    /// `cuDevicePrimaryCtxGetState`: whether the primary context of `dev` is active.
    pub(crate) fn primary_active(dev: sys::CUdevice) -> Result<bool> {
        let (mut flags, mut active) = (0, 0);
        // SAFETY: both are valid out-pointers; `dev` came from cuDeviceGet.
        unsafe { drv!(cuDevicePrimaryCtxGetState(dev, &mut flags, &mut active)) }?;
        Ok(active != 0)
    }

    /// `cuCtxGetCurrent`.
    pub(crate) fn get_current() -> Result<sys::CUcontext> {
        let mut ctx = std::ptr::null_mut();
        // SAFETY: `ctx` is a valid out-pointer.
        unsafe { drv!(cuCtxGetCurrent(&mut ctx)) }?;
        Ok(ctx)
    }

    /// `cuCtxSetCurrent`.
    ///
    /// # Safety
    /// 1. `ctx` is null or a live context.
    pub(crate) unsafe fn set_current(ctx: sys::CUcontext) -> Result<()> {
        // SAFETY: `ctx` is live (1).
        unsafe { drv!(cuCtxSetCurrent(ctx)) }?;
        Ok(())
    }

    /// `cuCtxGetDevice`: the device of the current context.
    #[cfg(feature = "cudarc")]
    pub(crate) fn device() -> Result<sys::CUdevice> {
        let mut dev = 0;
        // SAFETY: `dev` is a valid out-pointer.
        unsafe { drv!(cuCtxGetDevice(&mut dev)) }?;
        Ok(dev)
    }

    /// `cuCtxSynchronize` on the current context.
    pub(crate) fn synchronize() -> Result<()> {
        // SAFETY: no pointers; acts on the current context.
        unsafe { drv!(cuCtxSynchronize()) }?;
        Ok(())
    }

    /// `cuMemGetInfo` for the current context: (free, total) bytes.
    pub(crate) fn mem_info() -> Result<(usize, usize)> {
        let (mut free, mut total) = (0, 0);
        // SAFETY: both are valid out-pointers.
        unsafe { drv!(cuMemGetInfo_v2(&mut free, &mut total)) }?;
        Ok((free, total))
    }
}

pub(crate) mod stream {
    use super::*;

    /// `cuStreamCreate` in the current context.
    pub(crate) fn create(flags: c_uint) -> Result<sys::CUstream> {
        let mut s = std::ptr::null_mut();
        // SAFETY: `s` is a valid out-pointer.
        unsafe { drv!(cuStreamCreate(&mut s, flags)) }?;
        Ok(s)
    }

    /// `cuStreamDestroy`.
    ///
    /// # Safety
    /// 1. `s` was created by `create` and is not used after this call.
    pub(crate) unsafe fn destroy(s: sys::CUstream) -> Result<()> {
        // SAFETY: (1).
        unsafe { drv!(cuStreamDestroy_v2(s)) }?;
        Ok(())
    }

    /// `cuStreamSynchronize`.
    ///
    /// # Safety
    /// 1. `s` is a live stream of the current context, or a special stream handle.
    pub(crate) unsafe fn synchronize(s: sys::CUstream) -> Result<()> {
        // SAFETY: (1).
        unsafe { drv!(cuStreamSynchronize(s)) }?;
        Ok(())
    }

    /// `cuEventCreate`.
    pub(crate) fn event_create(flags: c_uint) -> Result<sys::CUevent> {
        let mut e = std::ptr::null_mut();
        // SAFETY: `e` is a valid out-pointer.
        unsafe { drv!(cuEventCreate(&mut e, flags)) }?;
        Ok(e)
    }

    /// `cuEventDestroy`.
    ///
    /// # Safety
    /// 1. `e` is live and not used after this call.
    pub(crate) unsafe fn event_destroy(e: sys::CUevent) -> Result<()> {
        // SAFETY: (1).
        unsafe { drv!(cuEventDestroy_v2(e)) }?;
        Ok(())
    }

    /// `cuEventRecord`.
    ///
    /// # Safety
    /// 1. `e` and `s` are live and belong to the same context.
    pub(crate) unsafe fn event_record(e: sys::CUevent, s: sys::CUstream) -> Result<()> {
        // SAFETY: (1).
        unsafe { drv!(cuEventRecord(e, s)) }?;
        Ok(())
    }

    /// `cuEventSynchronize`.
    ///
    /// # Safety
    /// 1. `e` is live.
    pub(crate) unsafe fn event_synchronize(e: sys::CUevent) -> Result<()> {
        // SAFETY: (1).
        unsafe { drv!(cuEventSynchronize(e)) }?;
        Ok(())
    }

    /// `cuEventQuery`: `true` when the work before the recorded point has finished, `false`
    /// while it has not (`CUDA_ERROR_NOT_READY`).
    ///
    /// # Safety
    /// 1. `e` is live.
    pub(crate) unsafe fn event_query(e: sys::CUevent) -> Result<bool> {
        let driver = sys::driver()?;
        // SAFETY: (1).
        let rc = unsafe { driver.cuEventQuery(e) };
        if rc == sys::CUresult::CUDA_ERROR_NOT_READY {
            return Ok(false);
        }
        super::check("cuEventQuery", rc)?;
        Ok(true)
    }

    /// `cuEventElapsedTime` in milliseconds.
    ///
    /// # Safety
    /// 1. Both events are live, created with timing, and recorded.
    pub(crate) unsafe fn event_elapsed(start: sys::CUevent, end: sys::CUevent) -> Result<f32> {
        let mut ms = 0.0f32;
        // SAFETY: (1); `ms` is a valid out-pointer.
        unsafe { drv!(cuEventElapsedTime(&mut ms, start, end)) }?;
        Ok(ms)
    }

    /// `cuStreamWaitEvent`.
    ///
    /// # Safety
    /// 1. `s` and `e` are live.
    pub(crate) unsafe fn wait_event(s: sys::CUstream, e: sys::CUevent) -> Result<()> {
        // SAFETY: (1).
        unsafe { drv!(cuStreamWaitEvent(s, e, 0)) }?;
        Ok(())
    }
}

pub(crate) mod graphics {
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
        let rc =
            unsafe { driver.cuGraphicsMapResources(rs.len() as c_uint, rs.as_mut_ptr(), stream) };
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
}

pub(crate) mod array {
    use super::*;

    /// `cuArray3DGetDescriptor`.
    ///
    /// # Safety
    /// 1. `a` is a live array.
    pub(crate) unsafe fn descriptor(a: sys::CUarray) -> Result<sys::CUDA_ARRAY3D_DESCRIPTOR> {
        let mut d = sys::CUDA_ARRAY3D_DESCRIPTOR::default();
        // SAFETY: (1); the out-pointer is valid.
        unsafe { drv!(cuArray3DGetDescriptor_v2(&mut d, a)) }?;
        Ok(d)
    }

    /// `cuMipmappedArrayGetLevel`.
    ///
    /// # Safety
    /// 1. `m` is a live mipmapped array.
    pub(crate) unsafe fn mipmap_level(
        m: sys::CUmipmappedArray,
        level: c_uint,
    ) -> Result<sys::CUarray> {
        let mut a = std::ptr::null_mut();
        // SAFETY: (1); the out-pointer is valid.
        unsafe { drv!(cuMipmappedArrayGetLevel(&mut a, m, level)) }?;
        Ok(a)
    }

    /// `cuMemcpy2DAsync`.
    ///
    /// # Safety
    /// 1. Every host address, device address and array in `copy` is live, spans the region
    ///    `copy` describes, and stays so until the copy has completed on `s`; the destination
    ///    may be written.
    /// 2. `s` is a live stream of the current context.
    pub(crate) unsafe fn copy_2d_async(copy: &sys::CUDA_MEMCPY2D, s: sys::CUstream) -> Result<()> {
        // SAFETY: (1), (2); `copy` is a complete descriptor that outlives the call.
        unsafe { drv!(cuMemcpy2DAsync_v2(copy, s)) }?;
        Ok(())
    }

    /// `cuMemcpy3DAsync` (3-D and layered arrays).
    ///
    /// # Safety
    /// As [`copy_2d_async`].
    pub(crate) unsafe fn copy_3d_async(copy: &sys::CUDA_MEMCPY3D, s: sys::CUstream) -> Result<()> {
        // SAFETY: as `copy_2d_async` (1), (2); `copy` is a complete descriptor.
        unsafe { drv!(cuMemcpy3DAsync_v2(copy, s)) }?;
        Ok(())
    }

    /// `cuSurfObjectCreate` over a whole array.
    ///
    /// # Safety
    /// 1. `a` is live (and outlives the surface object), created with surface load/store.
    pub(crate) unsafe fn surface_create(a: sys::CUarray) -> Result<sys::CUsurfObject> {
        let mut desc = sys::CUDA_RESOURCE_DESC {
            resType: sys::CUresourcetype::CU_RESOURCE_TYPE_ARRAY,
            ..Default::default()
        };
        desc.res.array.hArray = a;
        let mut s = 0;
        // SAFETY: (1); `desc` describes the array; the out-pointer is valid.
        unsafe { drv!(cuSurfObjectCreate(&mut s, &desc)) }?;
        Ok(s)
    }

    /// `cuSurfObjectDestroy`.
    ///
    /// # Safety
    /// 1. `s` is live and no pending work uses it after this call.
    pub(crate) unsafe fn surface_destroy(s: sys::CUsurfObject) -> Result<()> {
        // SAFETY: (1).
        unsafe { drv!(cuSurfObjectDestroy(s)) }?;
        Ok(())
    }

    /// `cuTexObjectCreate` over a whole array.
    ///
    /// # Safety
    /// 1. `a` is live and outlives the texture object.
    pub(crate) unsafe fn texture_create(
        a: sys::CUarray,
        tex: &sys::CUDA_TEXTURE_DESC,
    ) -> Result<sys::CUtexObject> {
        let mut desc = sys::CUDA_RESOURCE_DESC {
            resType: sys::CUresourcetype::CU_RESOURCE_TYPE_ARRAY,
            ..Default::default()
        };
        desc.res.array.hArray = a;
        let mut t = 0;
        // SAFETY: (1); the descriptors are valid; the out-pointer is valid.
        unsafe { drv!(cuTexObjectCreate(&mut t, &desc, tex, std::ptr::null())) }?;
        Ok(t)
    }

    /// `cuTexObjectDestroy`.
    ///
    /// # Safety
    /// 1. `t` is live and no pending work uses it after this call.
    pub(crate) unsafe fn texture_destroy(t: sys::CUtexObject) -> Result<()> {
        // SAFETY: (1).
        unsafe { drv!(cuTexObjectDestroy(t)) }?;
        Ok(())
    }
}

pub(crate) mod mem {
    use super::*;

    /// `cuMemsetD8`: sets `bytes` bytes from `ptr` to `value`.
    ///
    /// # Safety
    /// 1. `[ptr, ptr + bytes)` is device memory of the current context, mapped and writable,
    ///    and no other work reads or writes it meanwhile.
    pub(crate) unsafe fn memset_d8(ptr: sys::CUdeviceptr, value: u8, bytes: usize) -> Result<()> {
        // SAFETY: (1).
        unsafe { drv!(cuMemsetD8_v2(ptr, value, bytes)) }?;
        Ok(())
    }
}

pub(crate) mod vmm;

pub(crate) use drv;

/// A raw pointer to an argument value, as `cuLaunchKernel` takes them.
pub(crate) type RawArg = *mut c_void;
