//! `cargo xtask bindgen`: regenerates `cuda-gl-sys/src/bindings.rs` from the CUDA 12.0 headers.
//!
//! The headers come from the PyPI wheel `nvidia-cuda-runtime-cu12==12.0.146` (fetched into
//! `target/xtask/` when `--headers` is not given); `GL/gl.h` comes from the system (`libgl-dev`).
//! Binding against 12.0 means every symbol exists in every driver since R525.

use anyhow::{Context, Result, anyhow};
use std::path::PathBuf;

/// The pinned wheel that ships `cuda.h` and `cudaGL.h` of CUDA 12.0.
pub const HEADERS_WHEEL: &str = "nvidia-cuda-runtime-cu12==12.0.146";

/// Every driver entry point the workspace binds. Versioned names (`_v2`) are what the headers'
/// `#define`s turn these into, so they are matched by prefix.
const FUNCTIONS: &[&str] = &[
    // Errors, init, version.
    "cuGetErrorName",
    "cuGetErrorString",
    "cuInit",
    "cuDriverGetVersion",
    // Devices.
    "cuDeviceGet",
    "cuDeviceGetCount",
    "cuDeviceGetName",
    "cuDeviceGetAttribute",
    "cuDeviceTotalMem",
    "cuDeviceGetPCIBusId",
    "cuDeviceGetUuid",
    // Primary and current contexts.
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease",
    "cuDevicePrimaryCtxReset",
    "cuDevicePrimaryCtxGetState",
    "cuDevicePrimaryCtxSetFlags",
    "cuCtxGetCurrent",
    "cuCtxSetCurrent",
    "cuCtxPushCurrent",
    "cuCtxPopCurrent",
    "cuCtxGetDevice",
    "cuCtxSynchronize",
    "cuCtxGetApiVersion",
    // Streams and events.
    "cuStreamCreate",
    "cuStreamCreateWithPriority",
    "cuStreamDestroy",
    "cuStreamSynchronize",
    "cuStreamQuery",
    "cuStreamWaitEvent",
    "cuStreamGetCtx",
    "cuStreamGetFlags",
    "cuStreamIsCapturing",
    "cuThreadExchangeStreamCaptureMode",
    "cuEventCreate",
    "cuEventDestroy",
    "cuEventRecord",
    "cuEventSynchronize",
    "cuEventQuery",
    "cuEventElapsedTime",
    // Modules and launches.
    "cuModuleLoadData",
    "cuModuleLoadDataEx",
    "cuModuleUnload",
    "cuModuleGetFunction",
    "cuModuleGetGlobal",
    "cuFuncGetAttribute",
    "cuLaunchKernel",
    // Memory.
    "cuMemGetInfo",
    "cuMemAlloc",
    "cuMemFree",
    "cuMemAllocHost",
    "cuMemFreeHost",
    "cuMemHostAlloc",
    "cuMemcpyHtoD",
    "cuMemcpyDtoH",
    "cuMemcpyDtoD",
    "cuMemcpyHtoDAsync",
    "cuMemcpyDtoHAsync",
    "cuMemcpyDtoDAsync",
    "cuMemcpy2D",
    "cuMemcpy2DAsync",
    "cuMemcpy3D",
    "cuMemcpy3DAsync",
    "cuMemsetD8",
    "cuMemsetD32",
    "cuMemsetD8Async",
    "cuMemsetD32Async",
    // Arrays, surfaces, textures.
    "cuArrayCreate",
    "cuArray3DCreate",
    "cuArrayDestroy",
    "cuArrayGetDescriptor",
    "cuArray3DGetDescriptor",
    "cuMipmappedArrayGetLevel",
    "cuMipmappedArrayDestroy",
    "cuSurfObjectCreate",
    "cuSurfObjectDestroy",
    "cuTexObjectCreate",
    "cuTexObjectDestroy",
    // OpenGL interop (cudaGL.h) and the generic graphics calls.
    "cuGLGetDevices",
    "cuGraphicsGLRegisterBuffer",
    "cuGraphicsGLRegisterImage",
    "cuGraphicsMapResources",
    "cuGraphicsUnmapResources",
    "cuGraphicsResourceGetMappedPointer",
    "cuGraphicsSubResourceGetMappedArray",
    "cuGraphicsResourceGetMappedMipmappedArray",
    "cuGraphicsResourceSetMapFlags",
    "cuGraphicsUnregisterResource",
    // External memory and semaphores.
    "cuImportExternalMemory",
    "cuExternalMemoryGetMappedBuffer",
    "cuExternalMemoryGetMappedMipmappedArray",
    "cuDestroyExternalMemory",
    "cuImportExternalSemaphore",
    "cuSignalExternalSemaphoresAsync",
    "cuWaitExternalSemaphoresAsync",
    "cuDestroyExternalSemaphore",
    // Virtual memory management (exportable allocations).
    "cuMemCreate",
    "cuMemRelease",
    "cuMemExportToShareableHandle",
    "cuMemAddressReserve",
    "cuMemAddressFree",
    "cuMemMap",
    "cuMemUnmap",
    "cuMemSetAccess",
    "cuMemGetAllocationGranularity",
];

/// Types bound besides those the functions pull in (flag enums passed as `unsigned int`).
const TYPES: &[&str] = &[
    "CUresult",
    "CUdevice_attribute",
    "CUgraphicsRegisterFlags",
    "CUgraphicsMapResourceFlags",
    "CUarray_cubemap_idx",
    "CUctx_flags",
    "CUstream_flags",
    "CUevent_flags",
    "CUmemAttach_flags",
    "CUjit_option",
    "CUfunction_attribute",
    "CUaddress_mode",
    "CUfilter_mode",
    "CUresourceViewFormat",
    "CUmemAllocationCompType",
];

/// `#define`d constants to keep.
const VARS: &[&str] = &[
    "CUDA_VERSION",
    "CU_TRSF_.*",
    "CUDA_ARRAY3D_.*",
    "CU_MEMHOSTALLOC_.*",
    "CUDA_EXTERNAL_MEMORY_DEDICATED",
];

pub fn run(headers: Option<PathBuf>, check: bool) -> Result<()> {
    let include = match headers {
        Some(dir) => dir,
        None => crate::pinned::wheel(HEADERS_WHEEL, "cuda-runtime-12.0.146")?
            .join("nvidia/cuda_runtime/include"),
    };
    let cuda_h = include.join("cuda.h");
    if !cuda_h.exists() {
        return Err(anyhow!("{} not found", cuda_h.display()));
    }
    let mut builder = bindgen::Builder::default()
        .header_contents("wrapper.h", "#include <cuda.h>\n#include <cudaGL.h>\n")
        .clang_arg(format!("-I{}", include.display()))
        .rust_target(bindgen::RustTarget::stable(85, 0).map_err(|e| anyhow!("{e}"))?)
        .rust_edition(bindgen::RustEdition::Edition2024)
        .dynamic_library_name("Driver")
        .dynamic_link_require_all(true)
        .default_enum_style(bindgen::EnumVariation::NewType {
            is_bitfield: false,
            is_global: false,
        })
        .derive_default(true)
        .derive_debug(true)
        .derive_eq(true)
        .derive_hash(true)
        .impl_debug(false)
        .generate_comments(false)
        .layout_tests(true)
        .raw_line("// Generated by `cargo xtask bindgen` from the CUDA 12.0 headers cuda.h and")
        .raw_line(format!(
            "// cudaGL.h ({HEADERS_WHEEL}). Do not edit by hand."
        ))
        .raw_line("#![allow(non_camel_case_types, non_snake_case, non_upper_case_globals)]")
        .raw_line("#![allow(clippy::all, missing_docs, missing_debug_implementations)]")
        .raw_line("#![allow(unsafe_op_in_unsafe_fn, rustdoc::all)]");
    for f in FUNCTIONS {
        // `cuMemAlloc` matches `cuMemAlloc` and `cuMemAlloc_v2`, but not `cuMemAllocHost`.
        builder = builder.allowlist_function(format!("{f}(_v[0-9]+)?"));
    }
    for t in TYPES {
        builder = builder.allowlist_type(t);
    }
    for v in VARS {
        builder = builder.allowlist_var(v);
    }
    let bindings = builder
        .generate()
        .map_err(|e| anyhow!("bindgen failed: {e}; is libclang installed (libclang-dev)?"))?;
    let text = bindings.to_string();
    let out = crate::workspace_root().join("cuda-gl-sys/src/bindings.rs");
    crate::pinned::write_or_check(&out, &text, check).context("bindings")
}
