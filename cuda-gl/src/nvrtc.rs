//! CUDA C++ compiled to PTX at run time with NVRTC, for kernels of your own crate without a
//! build step.
//!
//! NVRTC is opened at run time like the driver: `$CUDA_GL_NVRTC_PATH` when set, otherwise
//! `libnvrtc.so.12`, `libnvrtc.so.13`, then `libnvrtc.so` from the loader's search path. It
//! comes with the CUDA toolkit, or from PyPI (`pip install nvidia-cuda-nvrtc-cu12`, which puts
//! `nvidia/cuda_nvrtc/lib/libnvrtc.so.12` into site-packages). Nothing is opened until the first
//! compilation, and the crate builds without it.
//!
//! ```no_run
//! use cuda_gl::{Context, Device, LaunchConfig, Module, Stream, StreamFlags};
//!
//! # fn main() -> cuda_gl::Result<()> {
//! const SRC: &str = r#"
//! extern "C" __global__ void scale(float* v, unsigned n, float k) {
//!     unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
//!     if (i < n) v[i] *= k;
//! }"#;
//! let ctx = Context::new(&Device::get(0)?)?;
//! let module = Module::from_cuda_source(&ctx, SRC, &["--std=c++17"])?;
//! let scale = module.function("scale")?;
//! # let _ = (scale, LaunchConfig::for_elements(1), Stream::new(&ctx, StreamFlags::NonBlocking)?);
//! # Ok(())
//! # }
//! ```
//!
//! Kernels meant for [`Module::function`] are `extern "C"`, so their names are not mangled.
//! NVRTC's default target is its oldest virtual architecture, whose PTX every driver of that
//! CUDA major version can JIT; pass `--gpu-architecture=compute_XY` for newer features. A PTX
//! newer than the driver is refused when loading, with [`Error::PtxTooNew`].

use crate::context::Context;
use crate::error::{Error, Result};
use crate::module::Module;
use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// The environment variable naming the NVRTC library to open instead of searching.
pub const NVRTC_PATH_ENV: &str = "CUDA_GL_NVRTC_PATH";

/// The names searched, in order, when [`NVRTC_PATH_ENV`] is not set.
const NAMES: &[&str] = &["libnvrtc.so.12", "libnvrtc.so.13", "libnvrtc.so"];

/// The program name NVRTC puts in its log.
const PROGRAM_NAME: &CStr = c"cuda_gl_source.cu";

/// `nvrtcResult`; 0 is `NVRTC_SUCCESS`.
type NvrtcResult = c_int;
/// `nvrtcProgram`.
type Program = *mut c_void;

/// The entry points used, with the C signatures of `nvrtc.h` (unchanged from CUDA 11 to 13).
#[derive(Debug)]
struct Nvrtc {
    path: PathBuf,
    version: unsafe extern "C" fn(*mut c_int, *mut c_int) -> NvrtcResult,
    get_error_string: unsafe extern "C" fn(NvrtcResult) -> *const c_char,
    create_program: unsafe extern "C" fn(
        *mut Program,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> NvrtcResult,
    compile_program: unsafe extern "C" fn(Program, c_int, *const *const c_char) -> NvrtcResult,
    get_ptx_size: unsafe extern "C" fn(Program, *mut usize) -> NvrtcResult,
    get_ptx: unsafe extern "C" fn(Program, *mut c_char) -> NvrtcResult,
    get_program_log_size: unsafe extern "C" fn(Program, *mut usize) -> NvrtcResult,
    get_program_log: unsafe extern "C" fn(Program, *mut c_char) -> NvrtcResult,
    destroy_program: unsafe extern "C" fn(*mut Program) -> NvrtcResult,
    /// Keeps the function pointers above valid; never unloaded (it lives in a static).
    _lib: libloading::Library,
}

/// NVRTC, opened once per process; the error lists every library tried.
fn nvrtc() -> Result<&'static Nvrtc> {
    static NVRTC: OnceLock<std::result::Result<Nvrtc, Vec<String>>> = OnceLock::new();
    NVRTC
        .get_or_init(open)
        .as_ref()
        .map_err(|tried| Error::NvrtcUnavailable {
            tried: tried.clone(),
        })
}

fn open() -> std::result::Result<Nvrtc, Vec<String>> {
    let candidates: Vec<PathBuf> = match std::env::var_os(NVRTC_PATH_ENV) {
        Some(path) => vec![PathBuf::from(path)],
        None => NAMES.iter().map(PathBuf::from).collect(),
    };
    let mut tried = Vec::new();
    for path in candidates {
        // SAFETY: opening NVRTC runs only its ELF initialisers, which have no preconditions.
        match unsafe { libloading::Library::new(&path) }.and_then(|lib| resolve(path.clone(), lib))
        {
            Ok(nvrtc) => return Ok(nvrtc),
            Err(e) => tried.push(format!("{}: {e}", path.display())),
        }
    }
    Err(tried)
}

fn resolve(
    path: PathBuf,
    lib: libloading::Library,
) -> std::result::Result<Nvrtc, libloading::Error> {
    // SAFETY: each field's type is the C signature `nvrtc.h` declares for the symbol named.
    unsafe {
        Ok(Nvrtc {
            path,
            version: *lib.get(b"nvrtcVersion\0")?,
            get_error_string: *lib.get(b"nvrtcGetErrorString\0")?,
            create_program: *lib.get(b"nvrtcCreateProgram\0")?,
            compile_program: *lib.get(b"nvrtcCompileProgram\0")?,
            get_ptx_size: *lib.get(b"nvrtcGetPTXSize\0")?,
            get_ptx: *lib.get(b"nvrtcGetPTX\0")?,
            get_program_log_size: *lib.get(b"nvrtcGetProgramLogSize\0")?,
            get_program_log: *lib.get(b"nvrtcGetProgramLog\0")?,
            destroy_program: *lib.get(b"nvrtcDestroyProgram\0")?,
            _lib: lib,
        })
    }
}

impl Nvrtc {
    /// The error of a failed call, with NVRTC's name for the code.
    fn error(&self, call: &'static str, code: NvrtcResult, log: String) -> Error {
        // SAFETY: nvrtcGetErrorString accepts any code and returns a static string or null.
        let text = unsafe { (self.get_error_string)(code) };
        let message = if text.is_null() {
            format!("nvrtcResult {code}")
        } else {
            // SAFETY: a non-null result is a NUL-terminated static string.
            unsafe { CStr::from_ptr(text) }
                .to_string_lossy()
                .into_owned()
        };
        Error::Compile {
            call,
            code,
            message,
            log,
        }
    }

    /// Reads a NUL-terminated output of `size_of` bytes with `read`.
    ///
    /// # Safety
    /// 1. `prog` is a live program; `size_of` and `read` are a size query and the matching
    ///    read of NVRTC, which writes at most the size reported.
    unsafe fn output(
        &self,
        prog: Program,
        calls: (&'static str, &'static str),
        size_of: unsafe extern "C" fn(Program, *mut usize) -> NvrtcResult,
        read: unsafe extern "C" fn(Program, *mut c_char) -> NvrtcResult,
    ) -> Result<String> {
        let mut size = 0usize;
        // SAFETY: (1); `size` is a valid out-pointer.
        let rc = unsafe { size_of(prog, &mut size) };
        if rc != 0 {
            return Err(self.error(calls.0, rc, String::new()));
        }
        let mut buf = vec![0u8; size.max(1)];
        // SAFETY: (1); `buf` holds the `size` bytes NVRTC writes (at least one, for the NUL).
        let rc = unsafe { read(prog, buf.as_mut_ptr().cast()) };
        if rc != 0 {
            return Err(self.error(calls.1, rc, String::new()));
        }
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        buf.truncate(end);
        Ok(String::from_utf8_lossy(&buf).into_owned())
    }

    /// Compiles `src` with `options` on the live program `prog`; returns the PTX.
    ///
    /// # Safety
    /// 1. `prog` is a live program created from `src`.
    unsafe fn compile(&self, prog: Program, options: &[CString]) -> Result<String> {
        let ptrs: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
        let count = c_int::try_from(ptrs.len())
            .map_err(|_| Error::InvalidArgument("too many NVRTC options".into()))?;
        // SAFETY: (1); `ptrs` holds `count` NUL-terminated strings that outlive the call.
        let rc = unsafe { (self.compile_program)(prog, count, ptrs.as_ptr()) };
        let log_calls = ("nvrtcGetProgramLogSize", "nvrtcGetProgramLog");
        // SAFETY: (1); the log size query and the log read belong together.
        let log = unsafe {
            self.output(
                prog,
                log_calls,
                self.get_program_log_size,
                self.get_program_log,
            )
        }
        .unwrap_or_default();
        if rc != 0 {
            return Err(self.error("nvrtcCompileProgram", rc, log));
        }
        if !log.trim().is_empty() {
            log::info!("cuda-gl: NVRTC warnings:\n{log}");
        }
        // SAFETY: (1), compiled; the PTX size query and the PTX read belong together.
        unsafe {
            self.output(
                prog,
                ("nvrtcGetPTXSize", "nvrtcGetPTX"),
                self.get_ptx_size,
                self.get_ptx,
            )
        }
    }
}

/// Compiles CUDA C++ source `src` to PTX with NVRTC options such as `--std=c++17` or
/// `--gpu-architecture=compute_75`. Load the result with [`Module::from_ptx`], or use
/// [`Module::from_cuda_source`] for both steps.
///
/// The source may include only NVRTC's built-in headers (no CUDA toolkit headers are searched
/// unless an `--include-path` option names them). NVRTC's warnings are logged with `log::info!`.
///
/// # Errors
/// [`Error::NvrtcUnavailable`] when NVRTC cannot be opened (each library tried, and why);
/// [`Error::Compile`] with NVRTC's log when the source does not compile (or another NVRTC
/// call fails); [`Error::InvalidArgument`] for a NUL byte in the source or an option.
#[doc(alias = "nvrtcCompileProgram")]
#[doc(alias = "nvrtcGetPTX")]
pub fn compile_ptx(src: &str, options: &[&str]) -> Result<String> {
    let nul = |what: &str| Error::InvalidArgument(format!("{what} contains a NUL byte"));
    let source = CString::new(src).map_err(|_| nul("the CUDA source"))?;
    let options = options
        .iter()
        .map(|o| CString::new(*o).map_err(|_| nul("an NVRTC option")))
        .collect::<Result<Vec<_>>>()?;
    let nvrtc = nvrtc()?;
    // Older NVRTC releases are not documented as thread-safe: one compilation at a time.
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let mut prog: Program = std::ptr::null_mut();
    // SAFETY: `prog` is a valid out-pointer; the source and name are NUL-terminated and outlive
    // the call; no headers are passed (count 0, null arrays).
    let rc = unsafe {
        (nvrtc.create_program)(
            &mut prog,
            source.as_ptr(),
            PROGRAM_NAME.as_ptr(),
            0,
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    if rc != 0 {
        return Err(nvrtc.error("nvrtcCreateProgram", rc, String::new()));
    }
    // SAFETY: `prog` was just created from `source`.
    let ptx = unsafe { nvrtc.compile(prog, &options) };
    // SAFETY: `prog` is live and not used after this.
    let rc = unsafe { (nvrtc.destroy_program)(&mut prog) };
    if rc != 0 {
        log::warn!(
            "cuda-gl: nvrtcDestroyProgram failed: {}",
            nvrtc.error("nvrtcDestroyProgram", rc, String::new())
        );
    }
    ptx
}

/// The version of the NVRTC library that [`compile_ptx`] uses, as `(major, minor)`, and its
/// path.
///
/// # Errors
/// [`Error::NvrtcUnavailable`] when NVRTC cannot be opened; [`Error::Compile`] when
/// `nvrtcVersion` fails.
#[doc(alias = "nvrtcVersion")]
pub fn version() -> Result<((i32, i32), PathBuf)> {
    let nvrtc = nvrtc()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: both are valid out-pointers.
    let rc = unsafe { (nvrtc.version)(&mut major, &mut minor) };
    if rc != 0 {
        return Err(nvrtc.error("nvrtcVersion", rc, String::new()));
    }
    Ok(((major, minor), nvrtc.path.clone()))
}

impl Module {
    /// Compiles CUDA C++ `src` with NVRTC ([`compile_ptx`]) and loads the PTX in `ctx`
    /// ([`Module::from_ptx`], which reads the kernels' parameter lists for the launch checks).
    ///
    /// # Errors
    /// As [`compile_ptx`], then as [`Module::from_ptx`] (e.g. [`Error::PtxTooNew`] when NVRTC
    /// is newer than the driver: pass an older `--gpu-architecture`, or use an older NVRTC).
    #[doc(alias = "nvrtcCompileProgram")]
    #[doc(alias = "cuModuleLoadDataEx")]
    pub fn from_cuda_source(ctx: &Arc<Context>, src: &str, options: &[&str]) -> Result<Module> {
        let ptx = compile_ptx(src, options)?;
        Module::from_ptx(ctx, &ptx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nul_bytes_are_refused_before_nvrtc_is_opened() {
        let err = compile_ptx("a\0b", &[]).err();
        assert!(
            matches!(&err, Some(Error::InvalidArgument(m)) if m.contains("source")),
            "{err:?}"
        );
        let err = compile_ptx("", &["--std=c++17\0"]).err();
        assert!(
            matches!(&err, Some(Error::InvalidArgument(m)) if m.contains("option")),
            "{err:?}"
        );
    }
}
