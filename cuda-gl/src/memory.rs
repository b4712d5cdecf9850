//! Device and pinned host memory: for kernels' scratch data, tests and baselines.

use crate::context::Context;
use crate::error::{Error, Result};
use crate::module::KernelParam;
use crate::result::drv;
use crate::stream::AsStream;
use cuda_gl_sys as sys;
use std::marker::PhantomData;
use std::sync::Arc;

/// Plain data that may be copied to and from the device byte for byte.
///
/// # Safety
/// Every bit pattern must be a valid value, and the type must have no padding or pointers.
pub unsafe trait DeviceCopy: Copy + 'static {}

macro_rules! device_copy {
    ($($t:ty),*) => { $(
        // SAFETY: a primitive whose every bit pattern is valid and which has no padding.
        unsafe impl DeviceCopy for $t {}
    )* };
}
device_copy!(i8, u8, i16, u16, i32, u32, i64, u64, f32, f64);
// SAFETY: arrays of plain data are plain data.
unsafe impl<T: DeviceCopy, const N: usize> DeviceCopy for [T; N] {}

/// The size in bytes of `len` values of `T`, rejecting zero and overflow before the driver sees
/// them.
fn allocation_bytes<T>(len: usize) -> Result<usize> {
    len.checked_mul(size_of::<T>())
        .filter(|&b| b > 0)
        .ok_or_else(|| {
            Error::InvalidArgument(format!(
                "cannot allocate {len} values of {} bytes",
                size_of::<T>()
            ))
        })
}

/// A device address borrowed from something that owns device memory ([`DeviceBuffer`], a mapped
/// buffer). Pass it to a kernel; it cannot outlive its owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(transparent)]
pub struct DevicePtr<'a> {
    raw: sys::CUdeviceptr,
    _owner: PhantomData<&'a ()>,
}

impl DevicePtr<'_> {
    /// Wraps a raw address for the lifetime of its owner.
    pub(crate) fn new(raw: sys::CUdeviceptr) -> Self {
        Self {
            raw,
            _owner: PhantomData,
        }
    }

    /// The raw address. It is only valid while the owner lives (and, for a mapping, stays
    /// mapped); keeping it longer is the caller's responsibility.
    pub fn as_raw(&self) -> sys::CUdeviceptr {
        self.raw
    }

    /// The address `bytes` further on.
    pub fn byte_add(self, bytes: usize) -> Self {
        Self::new(self.raw + bytes as u64)
    }
}

// SAFETY: a device address is passed to kernels as a 64-bit pointer, which is its layout.
unsafe impl KernelParam for DevicePtr<'_> {}

/// Device memory holding `len` values of `T`, freed on drop.
#[derive(Debug)]
pub struct DeviceBuffer<T: DeviceCopy> {
    ctx: Arc<Context>,
    raw: sys::CUdeviceptr,
    len: usize,
    _t: PhantomData<T>,
}

// SAFETY: device memory may be used from any thread; `T` is plain data.
unsafe impl<T: DeviceCopy> Send for DeviceBuffer<T> {}
// SAFETY: `&self` methods only read the handle.
unsafe impl<T: DeviceCopy> Sync for DeviceBuffer<T> {}

impl<T: DeviceCopy> DeviceBuffer<T> {
    /// Allocates `len` values, zero-filled.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a zero length; the driver's error from `cuMemAlloc`
    /// (e.g. `CUDA_ERROR_OUT_OF_MEMORY`).
    #[doc(alias = "cuMemAlloc")]
    pub fn zeroed(ctx: &Arc<Context>, len: usize) -> Result<Self> {
        let bytes = allocation_bytes::<T>(len)?;
        ctx.bind()?;
        let mut raw = 0;
        // SAFETY: `raw` is a valid out-pointer.
        unsafe { drv!(cuMemAlloc_v2(&mut raw, bytes)) }?;
        let buf = Self {
            ctx: ctx.clone(),
            raw,
            len,
            _t: PhantomData,
        };
        // SAFETY: the allocation is `bytes` long.
        unsafe { drv!(cuMemsetD8_v2(raw, 0, bytes)) }?;
        Ok(buf)
    }

    /// Allocates and copies `data` in.
    ///
    /// # Errors
    /// As [`DeviceBuffer::zeroed`], and the driver's error from `cuMemcpyHtoD`.
    pub fn from_slice(ctx: &Arc<Context>, data: &[T]) -> Result<Self> {
        let mut buf = Self::zeroed(ctx, data.len())?;
        buf.copy_from_slice(data)?;
        Ok(buf)
    }

    /// Copies `data` (exactly `len` values) in, synchronously.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a length mismatch; the driver's error from `cuMemcpyHtoD`.
    #[doc(alias = "cuMemcpyHtoD")]
    pub fn copy_from_slice(&mut self, data: &[T]) -> Result<()> {
        self.check_len(data.len())?;
        self.ctx.bind()?;
        // SAFETY: both ranges are `byte_len` long; `T` is plain data.
        unsafe {
            drv!(cuMemcpyHtoD_v2(
                self.raw,
                data.as_ptr().cast(),
                self.byte_len()
            ))
        }?;
        Ok(())
    }

    /// Copies the contents out, synchronously (after all work in the context).
    ///
    /// # Errors
    /// The driver's error from `cuMemcpyDtoH` (including errors of earlier kernels).
    #[doc(alias = "cuMemcpyDtoH")]
    pub fn to_vec(&self) -> Result<Vec<T>> {
        self.ctx.bind()?;
        let mut out = Vec::<T>::with_capacity(self.len);
        // SAFETY: the destination has capacity for `len` values; `T` accepts any bytes.
        unsafe {
            drv!(cuMemcpyDtoH_v2(
                out.as_mut_ptr().cast(),
                self.raw,
                self.byte_len()
            ))?;
            out.set_len(self.len);
        }
        Ok(out)
    }

    /// Sets every byte to `value`, in stream order.
    ///
    /// # Errors
    /// The driver's error from `cuMemsetD8Async`.
    #[doc(alias = "cuMemsetD8Async")]
    pub fn memset_async(&mut self, value: u8, stream: &impl AsStream) -> Result<()> {
        self.ctx.bind()?;
        // SAFETY: the range is the allocation; the stream is live while borrowed.
        unsafe {
            drv!(cuMemsetD8Async(
                self.raw,
                value,
                self.byte_len(),
                stream.raw_stream()
            ))
        }?;
        Ok(())
    }

    /// The device address, for kernel arguments.
    pub fn device_ptr(&self) -> DevicePtr<'_> {
        DevicePtr::new(self.raw)
    }

    /// How many values it holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no values (never true: zero-length buffers are rejected).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The size in bytes.
    pub fn byte_len(&self) -> usize {
        self.len * size_of::<T>()
    }

    fn check_len(&self, given: usize) -> Result<()> {
        if given == self.len {
            Ok(())
        } else {
            Err(Error::InvalidArgument(format!(
                "the buffer holds {} values but {given} were given",
                self.len
            )))
        }
    }
}

impl<T: DeviceCopy> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        if !self.ctx.bind_for_drop("free device memory") {
            return;
        }
        // SAFETY: the allocation came from cuMemAlloc and is not used after this.
        if let Err(e) = unsafe { drv!(cuMemFree_v2(self.raw)) } {
            self.ctx.record_drop_error("cuMemFree", e);
        }
    }
}

/// Page-locked host memory: the fast staging area for copies between host and device.
#[derive(Debug)]
pub struct PinnedBuffer<T: DeviceCopy> {
    ctx: Arc<Context>,
    ptr: *mut T,
    len: usize,
}

// SAFETY: the memory is owned by this value; `T` is plain data.
unsafe impl<T: DeviceCopy> Send for PinnedBuffer<T> {}
// SAFETY: shared access only reads.
unsafe impl<T: DeviceCopy> Sync for PinnedBuffer<T> {}

impl<T: DeviceCopy> PinnedBuffer<T> {
    /// Allocates `len` zero-filled values of page-locked host memory.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a zero length; the driver's error from `cuMemAllocHost`.
    #[doc(alias = "cuMemAllocHost")]
    pub fn zeroed(ctx: &Arc<Context>, len: usize) -> Result<Self> {
        let bytes = allocation_bytes::<T>(len)?;
        ctx.bind()?;
        let mut ptr = std::ptr::null_mut();
        // SAFETY: `ptr` is a valid out-pointer.
        unsafe { drv!(cuMemAllocHost_v2(&mut ptr, bytes)) }?;
        // SAFETY: the allocation is `bytes` long and suitably aligned for any primitive.
        unsafe { std::ptr::write_bytes(ptr.cast::<u8>(), 0, bytes) };
        Ok(Self {
            ctx: ctx.clone(),
            ptr: ptr.cast(),
            len,
        })
    }

    /// The contents. Do not read while an asynchronous copy into it is in flight.
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: `ptr` holds `len` initialised values for the lifetime of `self`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// The contents, mutably.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as above, and `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }

    /// Queues a copy of `src` (same length) into this buffer on `stream`. Synchronize the stream
    /// before reading the result.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a length mismatch; the driver's error from
    /// `cuMemcpyDtoHAsync`.
    #[doc(alias = "cuMemcpyDtoHAsync")]
    pub fn copy_from_device_async(
        &mut self,
        src: &DeviceBuffer<T>,
        stream: &impl AsStream,
    ) -> Result<()> {
        if src.len() != self.len {
            return Err(Error::InvalidArgument(format!(
                "the pinned buffer holds {} values but the device buffer {}",
                self.len,
                src.len()
            )));
        }
        self.ctx.bind()?;
        // SAFETY: both ranges are `len` values long and live (the device buffer is freed with
        // cuMemFree, which waits for pending copies); the stream is live while borrowed.
        unsafe {
            drv!(cuMemcpyDtoHAsync_v2(
                self.ptr.cast(),
                src.device_ptr().as_raw(),
                self.len * size_of::<T>(),
                stream.raw_stream()
            ))
        }?;
        Ok(())
    }

    /// How many values it holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no values (never true).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<T: DeviceCopy> Drop for PinnedBuffer<T> {
    fn drop(&mut self) {
        if !self.ctx.bind_for_drop("free pinned memory") {
            return;
        }
        // SAFETY: the memory came from cuMemAllocHost and is not used after this.
        if let Err(e) = unsafe { drv!(cuMemFreeHost(self.ptr.cast())) } {
            self.ctx.record_drop_error("cuMemFreeHost", e);
        }
    }
}
