//! The context calls of the result layer: the primary context, the current context, synchronisation.

use super::*;

/// `cuDevicePrimaryCtxRetain`.
pub(crate) fn primary_retain(dev: sys::CUdevice) -> Result<sys::CUcontext> {
    let mut ctx = std::ptr::null_mut();
    // SAFETY: `ctx` is a valid out-pointer; `dev` came from cuDeviceGet.
    unsafe { drv!(cuDevicePrimaryCtxRetain(&mut ctx, dev)) }.map(|()| ctx)
}

/// `cuDevicePrimaryCtxRelease`.
///
/// # Safety
/// 1. Each call must balance one earlier successful `primary_retain` of `dev`.
pub(crate) unsafe fn primary_release(dev: sys::CUdevice) -> Result<()> {
    // SAFETY: the caller balances a retain (1).
    unsafe { drv!(cuDevicePrimaryCtxRelease_v2(dev)) }
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
    unsafe { drv!(cuCtxGetCurrent(&mut ctx)) }.map(|()| ctx)
}

/// `cuCtxSetCurrent`.
///
/// # Safety
/// 1. `ctx` is null or a live context.
pub(crate) unsafe fn set_current(ctx: sys::CUcontext) -> Result<()> {
    // SAFETY: `ctx` is live (1).
    unsafe { drv!(cuCtxSetCurrent(ctx)) }
}

/// `cuCtxGetDevice`: the device of the current context.
pub(crate) fn device() -> Result<sys::CUdevice> {
    let mut dev = 0;
    // SAFETY: `dev` is a valid out-pointer.
    unsafe { drv!(cuCtxGetDevice(&mut dev)) }.map(|()| dev)
}

/// `cuCtxSynchronize` on the current context.
pub(crate) fn synchronize() -> Result<()> {
    // SAFETY: no pointers; acts on the current context.
    unsafe { drv!(cuCtxSynchronize()) }
}

/// `cuMemGetInfo` for the current context: (free, total) bytes.
pub(crate) fn mem_info() -> Result<(usize, usize)> {
    let (mut free, mut total) = (0, 0);
    // SAFETY: both are valid out-pointers.
    unsafe { drv!(cuMemGetInfo_v2(&mut free, &mut total)) }?;
    Ok((free, total))
}
