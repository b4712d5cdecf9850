//! The stream and event calls of the result layer.

use super::*;

/// `cuStreamCreate` in the current context.
pub(crate) fn create(flags: c_uint) -> Result<sys::CUstream> {
    let mut s = std::ptr::null_mut();
    // SAFETY: `s` is a valid out-pointer.
    unsafe { drv!(cuStreamCreate(&mut s, flags)) }.map(|()| s)
}

/// `cuStreamDestroy`.
///
/// # Safety
/// 1. `s` was created by `create` and is not used after this call.
pub(crate) unsafe fn destroy(s: sys::CUstream) -> Result<()> {
    // SAFETY: (1).
    unsafe { drv!(cuStreamDestroy_v2(s)) }
}

/// `cuStreamSynchronize`.
///
/// # Safety
/// 1. `s` is a live stream of the current context, or a special stream handle.
pub(crate) unsafe fn synchronize(s: sys::CUstream) -> Result<()> {
    // SAFETY: (1).
    unsafe { drv!(cuStreamSynchronize(s)) }
}

/// `cuStreamQuery`: `true` when all work queued on `s` so far has finished, `false` while it
/// has not (`CUDA_ERROR_NOT_READY`). The non-blocking half of `synchronize`, for waits with a
/// limit.
///
/// # Safety
/// 1. `s` is a live stream of the current context, or a special stream handle.
pub(crate) unsafe fn query(s: sys::CUstream) -> Result<bool> {
    let driver = sys::driver()?;
    // SAFETY: (1).
    ready("cuStreamQuery", unsafe { driver.cuStreamQuery(s) })
}

/// `cuStreamIsCapturing`: whether `s` is capturing a graph (or its capture was invalidated).
///
/// # Safety
/// 1. `s` is a live stream of the current context, or a special stream handle.
pub(crate) unsafe fn is_capturing(s: sys::CUstream) -> Result<bool> {
    let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    // SAFETY: (1); `status` is a valid out-pointer.
    unsafe { drv!(cuStreamIsCapturing(s, &mut status)) }
        .map(|()| status != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE)
}

/// `cuThreadExchangeStreamCaptureMode`: sets this thread's capture interaction mode to `*mode`
/// and writes the previous one there.
pub(crate) fn exchange_capture_mode(mode: &mut sys::CUstreamCaptureMode) -> Result<()> {
    // SAFETY: `mode` is a valid in/out pointer to one mode.
    unsafe { drv!(cuThreadExchangeStreamCaptureMode(mode)) }
}

/// `cuEventCreate`.
pub(crate) fn event_create(flags: c_uint) -> Result<sys::CUevent> {
    let mut e = std::ptr::null_mut();
    // SAFETY: `e` is a valid out-pointer.
    unsafe { drv!(cuEventCreate(&mut e, flags)) }.map(|()| e)
}

/// `cuEventDestroy`.
///
/// # Safety
/// 1. `e` is live and not used after this call.
pub(crate) unsafe fn event_destroy(e: sys::CUevent) -> Result<()> {
    // SAFETY: (1).
    unsafe { drv!(cuEventDestroy_v2(e)) }
}

/// `cuEventRecord`.
///
/// # Safety
/// 1. `e` and `s` are live and belong to the same context.
pub(crate) unsafe fn event_record(e: sys::CUevent, s: sys::CUstream) -> Result<()> {
    // SAFETY: (1).
    unsafe { drv!(cuEventRecord(e, s)) }
}

/// `cuEventSynchronize`.
///
/// # Safety
/// 1. `e` is live.
pub(crate) unsafe fn event_synchronize(e: sys::CUevent) -> Result<()> {
    // SAFETY: (1).
    unsafe { drv!(cuEventSynchronize(e)) }
}

/// `cuEventQuery`: `true` when the work before the recorded point has finished, `false`
/// while it has not (`CUDA_ERROR_NOT_READY`).
///
/// # Safety
/// 1. `e` is live.
pub(crate) unsafe fn event_query(e: sys::CUevent) -> Result<bool> {
    let driver = sys::driver()?;
    // SAFETY: (1).
    ready("cuEventQuery", unsafe { driver.cuEventQuery(e) })
}

/// A query's answer: `false` for `CUDA_ERROR_NOT_READY`, `true` for success, else `call`'s
/// error.
fn ready(call: &'static str, rc: sys::CUresult) -> Result<bool> {
    if rc == sys::CUresult::CUDA_ERROR_NOT_READY {
        return Ok(false);
    }
    super::check(call, rc)?;
    Ok(true)
}

/// `cuEventElapsedTime` in milliseconds.
///
/// # Safety
/// 1. Both events are live, created with timing, and recorded.
pub(crate) unsafe fn event_elapsed(start: sys::CUevent, end: sys::CUevent) -> Result<f32> {
    let mut ms = 0.0f32;
    // SAFETY: (1); `ms` is a valid out-pointer.
    unsafe { drv!(cuEventElapsedTime(&mut ms, start, end)) }.map(|()| ms)
}

/// `cuStreamWaitEvent`.
///
/// # Safety
/// 1. `s` and `e` are live.
pub(crate) unsafe fn wait_event(s: sys::CUstream, e: sys::CUevent) -> Result<()> {
    // SAFETY: (1).
    unsafe { drv!(cuStreamWaitEvent(s, e, 0)) }
}
