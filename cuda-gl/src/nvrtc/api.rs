//! NVRTC's C entry points, opened at run time with `libloading`, and one compilation from
//! source to PTX.
//!
//! This file uses only `std` and `libloading`: cuda-gl uses it as `nvrtc::api`, and xtask
//! includes it (`#[path]`) for `cargo xtask ptx`, which must build without cuda-gl.

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::path::PathBuf;

/// `nvrtcResult`; 0 is `NVRTC_SUCCESS`.
pub type NvrtcResult = c_int;
/// `nvrtcProgram`.
type Program = *mut c_void;

/// A failed NVRTC call.
#[derive(Debug)]
pub enum Failure {
    /// More options (this many) than a C `int` counts.
    TooManyOptions(usize),
    /// `call` returned `code`; `log` is the compiler's log for `nvrtcCompileProgram`, otherwise
    /// empty.
    Call {
        /// The NVRTC function that failed.
        call: &'static str,
        /// What it returned.
        code: NvrtcResult,
        /// The compiler's log, for `nvrtcCompileProgram`.
        log: String,
    },
}

/// A failed call without a log.
fn failed(call: &'static str, code: NvrtcResult) -> Failure {
    Failure::Call {
        call,
        code,
        log: String::new(),
    }
}

/// A successful compilation.
#[derive(Debug)]
pub struct Compiled {
    /// The PTX, up to its terminating NUL.
    pub ptx: Vec<u8>,
    /// The compiler's log (its warnings; empty when there are none or it could not be read).
    pub log: String,
}

/// The entry points used, with the C signatures of `nvrtc.h` (unchanged from CUDA 11 to 13).
#[derive(Debug)]
pub struct Nvrtc {
    /// The library opened.
    pub path: PathBuf,
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
    /// Keeps the function pointers above valid; declared last so it is dropped last.
    _lib: libloading::Library,
}

impl Nvrtc {
    /// Opens the NVRTC library at `path` and resolves every entry point.
    ///
    /// # Errors
    /// When the library cannot be opened or lacks one of the entry points.
    pub fn open(path: PathBuf) -> Result<Self, libloading::Error> {
        // SAFETY: opening NVRTC runs only its ELF initialisers, which have no preconditions.
        let lib = unsafe { libloading::Library::new(&path) }?;
        // SAFETY: each field's type is the C signature `nvrtc.h` declares for the symbol named.
        unsafe {
            Ok(Self {
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

    /// The library's version, as `(major, minor)`.
    ///
    /// # Errors
    /// When `nvrtcVersion` fails.
    pub fn version(&self) -> Result<(c_int, c_int), Failure> {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: both are valid out-pointers.
        let rc = unsafe { (self.version)(&mut major, &mut minor) };
        if rc != 0 {
            return Err(failed("nvrtcVersion", rc));
        }
        Ok((major, minor))
    }

    /// NVRTC's name for `code`, if it has one.
    pub fn error_string(&self, code: NvrtcResult) -> Option<String> {
        // SAFETY: nvrtcGetErrorString accepts any code and returns a static string or null.
        let text = unsafe { (self.get_error_string)(code) };
        (!text.is_null()).then(|| {
            // SAFETY: a non-null result is a NUL-terminated static string.
            unsafe { CStr::from_ptr(text) }
                .to_string_lossy()
                .into_owned()
        })
    }

    /// Compiles `source` (named `name` in NVRTC's log) with `options`. The second result is the
    /// failure of `nvrtcDestroyProgram` afterwards, if it failed.
    pub fn compile(
        &self,
        source: &CStr,
        name: &CStr,
        options: &[CString],
    ) -> (Result<Compiled, Failure>, Option<Failure>) {
        let mut prog: Program = std::ptr::null_mut();
        // SAFETY: `prog` is a valid out-pointer; the source and name are NUL-terminated and
        // outlive the call; no headers are passed (count 0, null arrays).
        let rc = unsafe {
            (self.create_program)(
                &mut prog,
                source.as_ptr(),
                name.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        if rc != 0 {
            return (Err(failed("nvrtcCreateProgram", rc)), None);
        }
        // SAFETY: `prog` was just created.
        let compiled = unsafe { self.compile_program(prog, options) };
        // SAFETY: `prog` is live and not used after this.
        let rc = unsafe { (self.destroy_program)(&mut prog) };
        (
            compiled,
            (rc != 0).then(|| failed("nvrtcDestroyProgram", rc)),
        )
    }

    /// Compiles the live program `prog` with `options`; returns the PTX and the log.
    ///
    /// # Safety
    /// 1. `prog` is a live program.
    unsafe fn compile_program(
        &self,
        prog: Program,
        options: &[CString],
    ) -> Result<Compiled, Failure> {
        let ptrs: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
        let count = c_int::try_from(ptrs.len()).map_err(|_| Failure::TooManyOptions(ptrs.len()))?;
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
        .map(|log| String::from_utf8_lossy(&log).into_owned())
        .unwrap_or_default();
        if rc != 0 {
            return Err(Failure::Call {
                call: "nvrtcCompileProgram",
                code: rc,
                log,
            });
        }
        // SAFETY: (1), compiled; the PTX size query and the PTX read belong together.
        let ptx = unsafe {
            self.output(
                prog,
                ("nvrtcGetPTXSize", "nvrtcGetPTX"),
                self.get_ptx_size,
                self.get_ptx,
            )
        }?;
        Ok(Compiled { ptx, log })
    }

    /// Reads a NUL-terminated output of `size_of` bytes with `read`, up to its NUL.
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
    ) -> Result<Vec<u8>, Failure> {
        let mut size = 0usize;
        // SAFETY: (1); `size` is a valid out-pointer.
        let rc = unsafe { size_of(prog, &mut size) };
        if rc != 0 {
            return Err(failed(calls.0, rc));
        }
        let mut buf = vec![0u8; size.max(1)];
        // SAFETY: (1); `buf` holds the `size` bytes NVRTC writes (at least one, for the NUL).
        let rc = unsafe { read(prog, buf.as_mut_ptr().cast()) };
        if rc != 0 {
            return Err(failed(calls.1, rc));
        }
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        buf.truncate(end);
        Ok(buf)
    }
}
