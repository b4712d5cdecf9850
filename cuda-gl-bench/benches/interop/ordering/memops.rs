//! CUDA stream memory operations (`cuStreamWaitValue32_v2`, `cuStreamWriteValue32_v2`), which
//! cuda-gl-sys's bindings (CUDA 12.0 headers, allowlisted) do not name: opened here from
//! libcuda with libloading, for the benchmark only.

use crate::gpu::cu;
use anyhow::{Context as _, Result};
use cuda_gl::{Device, Stream, sys};

/// `CU_STREAM_WAIT_VALUE_GEQ`: wait until `(int32_t)(*addr - value) >= 0`.
pub const WAIT_GEQ: u32 = 0x0;

type WaitValue32 = unsafe extern "C" fn(sys::CUstream, sys::CUdeviceptr, u32, u32) -> sys::CUresult;

/// The entry points, resolved once from libcuda (already loaded by cuda-gl-sys, so this only
/// takes another reference to it).
pub struct MemOps {
    wait: WaitValue32,
    write: WaitValue32,
    /// Keeps the symbols valid.
    _lib: libloading::Library,
}

impl MemOps {
    /// Opens libcuda.so.1 and resolves both `_v2` entry points (present since driver R515).
    pub fn load() -> Result<MemOps> {
        // SAFETY: libcuda's initialisers already ran when cuda-gl-sys opened it in this
        // process; opening it again only adds a reference.
        let lib = unsafe { libloading::Library::new("libcuda.so.1") }
            .context("opening libcuda.so.1 for the stream memory operations")?;
        // SAFETY: both symbols have the C signature `CUresult (CUstream, CUdeviceptr,
        // cuuint32_t, unsigned int)` in cuda.h; the library outlives the copies (kept in `_lib`).
        let (wait, write) = unsafe {
            let wait = *lib
                .get::<WaitValue32>(b"cuStreamWaitValue32_v2\0")
                .context("resolving cuStreamWaitValue32_v2")?;
            let write = *lib
                .get::<WaitValue32>(b"cuStreamWriteValue32_v2\0")
                .context("resolving cuStreamWriteValue32_v2")?;
            (wait, write)
        };
        Ok(MemOps {
            wait,
            write,
            _lib: lib,
        })
    }

    /// Queues a wait on `stream` until the 32-bit word at `addr` is `>= value` (wrapping).
    ///
    /// # Safety
    /// `addr` is a 4-byte-aligned device address of the stream's context that stays allocated
    /// until the wait has completed, and something will write a satisfying value to it.
    pub unsafe fn wait_geq(
        &self,
        stream: &Stream,
        addr: sys::CUdeviceptr,
        value: u32,
    ) -> Result<()> {
        // SAFETY: the caller's.
        cu("cuStreamWaitValue32_v2", unsafe {
            (self.wait)(stream.raw(), addr, value, WAIT_GEQ)
        })
    }

    /// Queues a write of `value` to the 32-bit word at `addr` on `stream`.
    ///
    /// # Safety
    /// `addr` is a 4-byte-aligned device address of the stream's context that stays allocated
    /// until the write has completed.
    pub unsafe fn write(&self, stream: &Stream, addr: sys::CUdeviceptr, value: u32) -> Result<()> {
        // SAFETY: the caller's.
        cu("cuStreamWriteValue32_v2", unsafe {
            (self.write)(stream.raw(), addr, value, 0)
        })
    }
}

/// The device attributes that say whether stream memory operations are available, as
/// `name=value` pairs for the log.
pub fn attributes(device: &Device) -> String {
    [
        (
            "CAN_USE_STREAM_MEM_OPS_V1",
            sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1,
        ),
        (
            "CAN_USE_64_BIT_STREAM_MEM_OPS_V1",
            sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1,
        ),
        (
            "CAN_USE_STREAM_WAIT_VALUE_NOR",
            sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR,
        ),
    ]
    .iter()
    .map(|(name, attribute)| match device.attribute(*attribute) {
        Ok(v) => format!("{name}={v}"),
        Err(e) => format!("{name}=? ({e})"),
    })
    .collect::<Vec<_>>()
    .join(", ")
}
