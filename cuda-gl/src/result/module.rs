//! The module calls of the result layer: load, look up a kernel, launch, unload.

use super::*;

/// `cuModuleLoadDataEx` in the current context, with the JIT error log written into `log`.
///
/// The outer `Result` fails only when the driver is not loaded; the inner one carries the
/// call's own code, so that the caller can classify it together with the log.
///
/// # Safety
/// 1. `image` is NUL-terminated PTX, or a cubin or fatbin whose headers describe bytes within
///    it, so the driver reads only the slice.
pub(crate) unsafe fn load_data_ex(
    image: &[u8],
    log: &mut [u8],
) -> Result<std::result::Result<sys::CUmodule, CudaError>> {
    let mut options = [
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    ];
    let mut values: [*mut c_void; 2] = [log.as_mut_ptr().cast(), log.len() as *mut c_void];
    let mut raw = std::ptr::null_mut();
    let driver = sys::driver()?;
    // SAFETY: `image` outlives the call and the driver reads only within it (1); the option
    // arrays have two entries each and the log buffer is as long as stated.
    let rc = unsafe {
        driver.cuModuleLoadDataEx(
            &mut raw,
            image.as_ptr().cast(),
            options.len() as u32,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
        )
    };
    Ok(check("cuModuleLoadDataEx", rc).map(|()| raw))
}

/// `cuModuleGetFunction`: the kernel `name` of `module`.
///
/// # Safety
/// 1. `module` is a live module of the current context.
pub(crate) unsafe fn get_function(module: sys::CUmodule, name: &CStr) -> Result<sys::CUfunction> {
    let mut raw = std::ptr::null_mut();
    // SAFETY: the module is live (1); the name is NUL-terminated; `raw` is a valid out-pointer.
    unsafe { drv!(cuModuleGetFunction(&mut raw, module, name.as_ptr())) }.map(|()| raw)
}

/// `cuModuleUnload`.
///
/// # Safety
/// 1. `module` is live, and neither it nor any function from it is used after this call.
pub(crate) unsafe fn unload(module: sys::CUmodule) -> Result<()> {
    // SAFETY: (1).
    unsafe { drv!(cuModuleUnload(module)) }
}

/// `cuLaunchKernel`: queues `f` on `stream` with one pointer per argument in `params`.
///
/// # Safety
/// 1. `f` is a live function of the current context and `stream` a live stream of it.
/// 2. `params` has one pointer per kernel parameter, each to a live value laid out as that
///    parameter expects, valid until the call returns.
/// 3. The arguments' meaning is sound for the kernel (pointers it dereferences are valid
///    device memory for as long as it runs, and so on).
pub(crate) unsafe fn launch_kernel(
    f: sys::CUfunction,
    grid: (c_uint, c_uint, c_uint),
    block: (c_uint, c_uint, c_uint),
    shared_mem_bytes: c_uint,
    stream: sys::CUstream,
    params: &mut [RawArg],
) -> Result<()> {
    #[cfg(test)]
    crate::result::test_ops::note(crate::result::test_ops::Op::Kernel { stream });
    // SAFETY: (1), (2), (3); no `extra` array.
    unsafe {
        drv!(cuLaunchKernel(
            f,
            grid.0,
            grid.1,
            grid.2,
            block.0,
            block.1,
            block.2,
            shared_mem_bytes,
            stream,
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        ))
    }?;
    Ok(())
}
