//! Modules from PTX or cubin, their kernels, and launches with typed arguments.

use crate::context::Context;
use crate::error::{Error, Result, UsageError};
use crate::result::CudaError;
use crate::result::{self, RawArg};
use crate::stream::AsStream;
use crate::wait::{InDrop, wait_limit};
use cuda_gl_sys as sys;
use std::collections::HashMap;
use std::ffi::{CString, c_void};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

mod binary;

/// The call named by the errors of checks that refuse a module before the driver sees it.
const LOAD_NOT_CALLED: &str = "cuModuleLoadDataEx (not called)";

/// A loaded CUDA module. Cheap to clone; unloaded when the last clone and every [`Function`] from
/// it are dropped.
///
/// `cuModuleUnload` is not documented to wait for the kernels of the module that still run, so once
/// a kernel of it was launched, that last drop first waits for the context's work, at most the
/// [wait limit](crate::wait_limit) (10 s by default); when that wait fails (a kernel that does not
/// end, or a graph capture in another thread that forbids it), the module is leaked (with a
/// reference to the context) rather than unloaded under running kernels, and the failure recorded
/// for [`Context::check_drop_errors`].
#[derive(Debug, Clone)]
pub struct Module {
    inner: Arc<ModuleInner>,
}

#[derive(Debug)]
struct ModuleInner {
    ctx: Arc<Context>,
    raw: sys::CUmodule,
    /// Parameter sizes per kernel, parsed from the PTX (empty for cubin).
    params: HashMap<String, Vec<usize>>,
    /// Set by every launch of one of its kernels, cleared by [`Function::kernels_done`]: while
    /// set, the unload in `Drop` first waits for the context's work.
    launched: AtomicBool,
}

// SAFETY: CUmodule handles may be used from any thread; the rest is immutable.
unsafe impl Send for ModuleInner {}
// SAFETY: as above.
unsafe impl Sync for ModuleInner {}

impl Module {
    /// Loads (JIT-compiles) a module from PTX text.
    ///
    /// The kernels' parameter lists are read from the PTX, so [`Function::launch`] can reject a
    /// wrong argument count or size before the driver sees it.
    ///
    /// # Errors
    /// - [`Error::PtxTooNew`] when the PTX ISA is newer than the driver supports
    ///   (`CUDA_ERROR_UNSUPPORTED_PTX_VERSION`);
    /// - [`Error::InvalidModule`] with the JIT log when the text is not valid PTX, or, before the
    ///   driver is called, when a kernel's parameter declaration cannot be read (a size that
    ///   does not fit in `usize`, say);
    /// - [`UsageError::NulByte`] when the text contains a NUL byte;
    /// - otherwise the driver's error from `cuModuleLoadDataEx`.
    #[doc(alias = "cuModuleLoadDataEx")]
    pub fn from_ptx(ctx: &Arc<Context>, ptx: &str) -> Result<Module> {
        let text = CString::new(ptx).map_err(|_| UsageError::NulByte {
            what: "the PTX text",
        })?;
        let params = parse_ptx_params(ptx).map_err(|log| Error::InvalidModule {
            log,
            source: CudaError::new(LOAD_NOT_CALLED, sys::CUresult::CUDA_ERROR_INVALID_PTX),
        })?;
        Self::load(ctx, text.as_bytes_with_nul(), params)
    }

    /// Loads a module from a cubin (or fatbin) image.
    ///
    /// `cuModuleLoadDataEx` takes no length and finds the end of the image from its headers, so
    /// the image is checked first: a little-endian ELF64 (a cubin) whose header tables,
    /// sections, segments and string-table offsets lie within the slice, or a fatbin
    /// (magic `0xBA55ED50`, version 1) whose header and every entry lie within it. Anything else
    /// (PTX text included: use [`Module::from_ptx`]) is refused before the driver reads it. The
    /// checks cost one pass over the headers. They refuse junk and truncated files, but they
    /// cannot bound everything the driver reads: offsets inside sections (relocations, symbols,
    /// `.nv.info` records) and inside fatbin entries (embedded cubins, compressed payloads) are
    /// followed by the driver alone. Hence `unsafe`.
    ///
    /// # Safety
    /// 1. `image` is a whole cubin or fatbin as a CUDA compiler wrote it (`nvcc -cubin`,
    ///    `nvcc -fatbin`, `ptxas`, NVRTC's `nvrtcGetCUBIN`), not bytes from an untrusted source:
    ///    every offset inside it points within the slice.
    ///
    /// # Errors
    /// - [`Error::InvalidModule`], before the driver is called, when the bytes are not such an
    ///   image (its `log` says what is wrong and what to do; its source is
    ///   `CUDA_ERROR_INVALID_IMAGE` from `cuModuleLoadDataEx (not called)`);
    /// - [`Error::InvalidModule`] with the driver's log when the driver refuses the image, e.g.
    ///   `CUDA_ERROR_NO_BINARY_FOR_GPU` for a cubin of another architecture;
    /// - otherwise the driver's error from `cuModuleLoadDataEx`.
    #[doc(alias = "cuModuleLoadDataEx")]
    pub unsafe fn from_cubin(ctx: &Arc<Context>, image: &[u8]) -> Result<Module> {
        binary::check_module_image(image).map_err(|log| Error::InvalidModule {
            log,
            source: CudaError::new(LOAD_NOT_CALLED, sys::CUresult::CUDA_ERROR_INVALID_IMAGE),
        })?;
        Self::load(ctx, image, HashMap::new())
    }

    fn load(
        ctx: &Arc<Context>,
        image: &[u8],
        params: HashMap<String, Vec<usize>>,
    ) -> Result<Module> {
        ctx.bind()?;
        let mut log = vec![0u8; 8192];
        // SAFETY: `image` is NUL-terminated PTX (from_ptx) or a whole compiler-written cubin or
        // fatbin whose headers were checked to lie within it (from_cubin's contract) (1).
        let raw = match unsafe { result::module::load_data_ex(image, &mut log) }? {
            Ok(raw) => raw,
            Err(source) => {
                let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
                let log = String::from_utf8_lossy(&log[..end]).into_owned();
                return Err(classify_load_error(source, log));
            }
        };
        Ok(Module {
            inner: Arc::new(ModuleInner {
                ctx: ctx.clone(),
                raw,
                params,
                launched: AtomicBool::new(false),
            }),
        })
    }

    /// The kernel named `name` (its `extern "C"` or mangled name).
    ///
    /// # Errors
    /// [`UsageError::NulByte`] for a name with a NUL byte; `CUDA_ERROR_NOT_FOUND` from
    /// `cuModuleGetFunction` when the module has no such kernel.
    #[doc(alias = "cuModuleGetFunction")]
    pub fn function(&self, name: &str) -> Result<Function> {
        let cname = CString::new(name).map_err(|_| UsageError::NulByte {
            what: "the kernel name",
        })?;
        self.inner.ctx.bind()?;
        // SAFETY: the module is live and its context bound (1).
        let raw = unsafe { result::module::get_function(self.inner.raw, &cname) }?;
        Ok(Function {
            module: self.inner.clone(),
            raw,
            name: name.to_string(),
            params: self.inner.params.get(name).cloned(),
        })
    }

    /// The context the module is loaded in.
    pub fn context(&self) -> &Arc<Context> {
        &self.inner.ctx
    }
}

fn classify_load_error(source: CudaError, log: String) -> Error {
    use sys::CUresult as R;
    match source.code {
        R::CUDA_ERROR_UNSUPPORTED_PTX_VERSION => Error::PtxTooNew {
            driver_version: cuda_gl_sys::driver_version().unwrap_or(0),
            source,
        },
        R::CUDA_ERROR_INVALID_PTX
        | R::CUDA_ERROR_INVALID_IMAGE
        | R::CUDA_ERROR_INVALID_SOURCE
        | R::CUDA_ERROR_NO_BINARY_FOR_GPU => Error::InvalidModule { log, source },
        _ => source.into(),
    }
}

impl Drop for ModuleInner {
    fn drop(&mut self) {
        if self.launched.load(Ordering::Acquire) {
            // A kernel of the module may still run (on any stream: `launch` takes the caller's),
            // and cuModuleUnload is not documented to wait for it: the whole context is waited
            // for first, within the limit.
            let _in_drop = InDrop::enter();
            if let Err(e) = self.ctx.synchronize_within(wait_limit()) {
                self.ctx.record_drop_wait(
                    "waiting for the kernels launched from a module before unloading it (the \
                     module and a reference to its context are leaked instead)",
                    "cuCtxSynchronize",
                    e,
                );
                // The context must outlive the module's kernels too: never released.
                std::mem::forget(self.ctx.clone());
                return;
            }
        }
        self.ctx
            .release_in_drop("unload a module", "cuModuleUnload", || {
                // SAFETY: the module is live, no Function (which holds this inner) is left, and
                // no kernel of it runs any more (never launched, waited for above, or waited
                // for by the owner that called `Function::kernels_done`).
                unsafe { result::module::unload(self.raw) }
            });
    }
}

/// Reads each `.entry`'s parameter sizes (bytes) from PTX text, or says which declaration it
/// cannot read.
fn parse_ptx_params(ptx: &str) -> std::result::Result<HashMap<String, Vec<usize>>, String> {
    let mut out = HashMap::new();
    let mut rest = ptx;
    while let Some(at) = rest.find(".entry") {
        rest = &rest[at + ".entry".len()..];
        let Some(open) = rest.find('(') else { break };
        let name = rest[..open].trim().to_string();
        let Some(close) = rest[open..].find(')') else {
            break;
        };
        let list = &rest[open + 1..open + close];
        let sizes = list
            .split(',')
            .map(str::trim)
            .filter(|p| p.starts_with(".param"))
            .map(param_size)
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| format!("kernel `{name}`: {e}"))?;
        out.insert(name, sizes);
        rest = &rest[open + close..];
    }
    Ok(out)
}

/// The size in bytes of one PTX parameter declaration, e.g. `.param .u64 p` or
/// `.param .align 8 .b8 p[16]`, or why it cannot be read. Sizes that do not fit in `usize`
/// are refused, never wrapped.
fn param_size(decl: &str) -> std::result::Result<usize, String> {
    let base = decl
        .split_whitespace()
        .find_map(|tok| {
            let bits = tok
                .strip_prefix(".u")
                .or_else(|| tok.strip_prefix(".s"))
                .or_else(|| tok.strip_prefix(".b"))
                .or_else(|| tok.strip_prefix(".f"))?;
            bits.parse::<u16>().ok().map(|b| usize::from(b / 8))
        })
        .unwrap_or(0);
    let count = match decl.rfind('[') {
        Some(i) => decl[i + 1..]
            .trim_end_matches(']')
            .trim()
            .parse::<usize>()
            .map_err(|_| {
                format!("the array length of `{decl}` is not a number that fits in usize")
            })?,
        None => 1,
    };
    base.checked_mul(count)
        .ok_or_else(|| format!("the size of `{decl}` ({base} x {count} bytes) overflows usize"))
}

/// A kernel in a loaded [`Module`].
#[derive(Debug, Clone)]
pub struct Function {
    module: Arc<ModuleInner>,
    raw: sys::CUfunction,
    name: String,
    params: Option<Vec<usize>>,
}

// SAFETY: CUfunction handles may be used from any thread.
unsafe impl Send for Function {}
// SAFETY: as above; the struct is immutable.
unsafe impl Sync for Function {}

/// Grid, block and dynamic shared memory of a launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LaunchConfig {
    /// Blocks in x, y, z.
    pub grid: (u32, u32, u32),
    /// Threads per block in x, y, z.
    pub block: (u32, u32, u32),
    /// Dynamic shared memory per block, in bytes.
    pub shared_mem_bytes: u32,
}

impl LaunchConfig {
    /// One thread per element of a 1-D range, 256 threads per block.
    pub fn for_elements(n: u32) -> LaunchConfig {
        LaunchConfig {
            grid: (n.div_ceil(256).max(1), 1, 1),
            block: (256, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    /// One thread per pixel of a `width` x `height` image, in 16x16 blocks.
    pub fn for_image(width: u32, height: u32) -> LaunchConfig {
        LaunchConfig {
            grid: (width.div_ceil(16).max(1), height.div_ceil(16).max(1), 1),
            block: (16, 16, 1),
            shared_mem_bytes: 0,
        }
    }
}

/// A value that can be passed to a kernel by value: plain data with no padding or pointers to
/// host memory.
///
/// # Safety
/// 1. The type's bytes are what the kernel parameter of the same size expects (its C layout,
///    no padding that the kernel would read).
/// 2. It holds no pointer to host memory that the kernel would dereference.
pub unsafe trait KernelParam: Copy {}

macro_rules! kernel_param {
    ($($t:ty),*) => { $(
        // SAFETY: a primitive with the same layout as the C type of its size.
        unsafe impl KernelParam for $t {}
    )* };
}
kernel_param!(i8, u8, i16, u16, i32, u32, i64, u64, f32, f64, isize, usize);

/// A tuple of [`KernelParam`]s: the arguments of one launch.
///
/// cuda-gl implements it for `()` and for tuples of up to 12 [`KernelParam`]s; those are what
/// [`Function::launch`] is meant to take. The trait is `unsafe` because `cuLaunchKernel` reads
/// as many bytes behind each pointer as the kernel's parameter declares, so a wrong pointer or
/// size makes the driver read memory that is not the argument's.
///
/// # Safety
/// Implementors guarantee that:
/// 1. [`KernelArgs::count`] is the number of pointers that [`KernelArgs::with_pointers`] passes
///    to `f`, on every call;
/// 2. [`KernelArgs::sizes`] has [`KernelArgs::count`] entries, entry `i` being the size in bytes
///    of argument `i`;
/// 3. pointer `i` passed to `f` points to a live, initialised value of `sizes()[i]` bytes that
///    stays valid and is not written by anything else until `f` returns;
/// 4. each value is laid out as the kernel parameter of that size expects (as [`KernelParam`]
///    requires).
///
/// [`Function::launch`] checks 1 and 2 against the pointers it receives and refuses the launch
/// with [`UsageError::KernelArgsImpl`] when they disagree; 3 and 4 cannot be checked.
pub unsafe trait KernelArgs {
    /// The size in bytes of each argument.
    fn sizes(&self) -> Vec<usize>;
    /// How many arguments there are.
    fn count(&self) -> usize;
    /// Calls `f` with one pointer per argument, as `cuLaunchKernel` takes them.
    fn with_pointers<R>(&mut self, f: impl FnOnce(&mut [RawArg]) -> R) -> R;
}

macro_rules! kernel_args {
    ($n:literal; $($name:ident $idx:tt),*) => {
        // SAFETY: `$n` pointers, one per tuple field, each to the field of the size listed;
        // the fields are `KernelParam`s and live in `self`, borrowed mutably for the call.
        unsafe impl<$($name: KernelParam),*> KernelArgs for ($($name,)*) {
            fn sizes(&self) -> Vec<usize> {
                vec![$(std::mem::size_of::<$name>()),*]
            }
            fn count(&self) -> usize {
                $n
            }
            fn with_pointers<R>(&mut self, f: impl FnOnce(&mut [RawArg]) -> R) -> R {
                let mut ptrs: [RawArg; $n] = [$((&mut self.$idx as *mut $name).cast::<c_void>()),*];
                f(&mut ptrs)
            }
        }
    };
}
// SAFETY: no arguments, no sizes, an empty pointer list.
unsafe impl KernelArgs for () {
    fn sizes(&self) -> Vec<usize> {
        Vec::new()
    }
    fn count(&self) -> usize {
        0
    }
    fn with_pointers<R>(&mut self, f: impl FnOnce(&mut [RawArg]) -> R) -> R {
        f(&mut [])
    }
}
kernel_args!(1; A 0);
kernel_args!(2; A 0, B 1);
kernel_args!(3; A 0, B 1, C 2);
kernel_args!(4; A 0, B 1, C 2, D 3);
kernel_args!(5; A 0, B 1, C 2, D 3, E 4);
kernel_args!(6; A 0, B 1, C 2, D 3, E 4, F 5);
kernel_args!(7; A 0, B 1, C 2, D 3, E 4, F 5, G 6);
kernel_args!(8; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
kernel_args!(9; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
kernel_args!(10; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
kernel_args!(11; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
kernel_args!(12; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);

impl Function {
    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The parameter sizes read from the PTX, when the module was loaded from PTX.
    pub fn param_sizes(&self) -> Option<&[usize]> {
        self.params.as_deref()
    }

    /// Queues the kernel on `stream` with `args`.
    ///
    /// When the module came from PTX, the argument count and sizes are checked against the
    /// kernel's declaration first.
    ///
    /// # Safety
    /// 1. The arguments are what the kernel expects: every device pointer points to live memory
    ///    of the right size that stays live until the kernel has finished.
    /// 2. The kernel does not race with other work on the memory it touches.
    /// 3. Handles from a mapping (device pointers, surfaces, texture objects) are used only by
    ///    work queued on the mapping's stream, or by work ordered before its unmap (through an
    ///    event the mapping's stream waits for before the unmap): the unmap is queued on the
    ///    mapping's stream and orders nothing else. The same holds for a display frame's
    ///    surface and pixels ([`Frame::surface`](crate::display::Frame::surface),
    ///    [`Frame::pixels`](crate::display::Frame::pixels)), up to the frame's present, on the
    ///    frame's stream.
    /// 4. Memory registered or mapped read-only ([`RegisterFlags::READ_ONLY`],
    ///    [`MapFlags::ReadOnly`]) is only read: CUDA leaves writes to it undefined. (cuda-gl's
    ///    safe copies refuse to write it.)
    /// 5. Writes do not overlap what the same launch, or other work in flight, reads of the same
    ///    storage unless the kernel orders them itself: two handles of one texture's storage
    ///    (a layer and its mip level, say) are the same memory. (The safe copies refuse a copy
    ///    onto the storage it reads.)
    /// 6. When `stream` is capturing a CUDA graph, the launch runs when the graph is launched,
    ///    not now: every handle and pointer stays valid, mapped and unaliased until each launch
    ///    of that graph has finished, the kernel's own module included (keep a clone of this
    ///    `Function` or of its [`Module`] until then: the drop of the last one waits only for
    ///    work already queued). (The safe stream-ordered calls refuse a capturing stream.)
    /// 7. External-memory pointers ([`FrameWrite::device_ptr`], the external ring's
    ///    [`CudaWrite::device_ptr`]) and a wgpu shared texture's surface
    ///    (`wgpu_interop::CudaWrite::surface`, feature `wgpu`) are written only by work queued
    ///    on the guard's stream before the guard finishes.
    /// 8. The kernel does not touch the first 16 bytes of an
    ///    [`ExportableMemory`](crate::external::ExportableMemory) while another thread imports
    ///    it ([`GlMemoryBuffer::import`](crate::external::GlMemoryBuffer::import) borrows them
    ///    for its check), and takes its address from
    ///    [`ExportableMemory::device_ptr`](crate::external::ExportableMemory::device_ptr) called
    ///    after the last import that failed (which waits for a check that gave up to put the
    ///    bytes back).
    ///
    /// [`RegisterFlags::READ_ONLY`]: crate::RegisterFlags::READ_ONLY
    /// [`MapFlags::ReadOnly`]: crate::MapFlags::ReadOnly
    /// [`FrameWrite::device_ptr`]: crate::external::FrameWrite::device_ptr
    /// [`CudaWrite::device_ptr`]: crate::external::CudaWrite::device_ptr
    ///
    /// # Errors
    /// - [`Error::KernelArguments`] when the arguments do not match the PTX declaration;
    /// - [`UsageError::WrongCudaContext`] for a stream of another context;
    ///   [`UsageError::KernelArgsImpl`] when the [`KernelArgs`] implementation's pointer count
    ///   disagrees with its `count()` or `sizes()` (a broken hand implementation; the driver is
    ///   not called);
    /// - otherwise the driver's error from `cuLaunchKernel` (e.g. `CUDA_ERROR_INVALID_VALUE`
    ///   for a block that is too large).
    #[doc(alias = "cuLaunchKernel")]
    pub unsafe fn launch<A: KernelArgs>(
        &self,
        config: LaunchConfig,
        stream: &impl AsStream,
        mut args: A,
    ) -> Result<()> {
        let given = args.sizes();
        let count = args.count();
        if let Some(expected) = &self.params
            && *expected != given
        {
            return Err(Error::KernelArguments {
                kernel: self.name.clone(),
                expected: expected.len(),
                expected_sizes: expected.clone(),
                given: given.len(),
                given_sizes: given,
            });
        }
        crate::stream::check_same_context(&self.module.ctx, stream, "the kernel's module")?;
        self.module.ctx.bind()?;
        let LaunchConfig {
            grid,
            block,
            shared_mem_bytes,
        } = config;
        let raw = self.raw;
        let s = stream.raw_stream();
        args.with_pointers(|ptrs| {
            if ptrs.len() != count || ptrs.len() != given.len() {
                return Err(Error::from(UsageError::KernelArgsImpl {
                    pointers: ptrs.len(),
                    count,
                    sizes: given.len(),
                }));
            }
            // SAFETY: the function and stream are live and of the bound context (1); `ptrs`
            // has one pointer per argument (checked above against count() and sizes()), each
            // valid for the call (the KernelArgs contract, 3) (2); the caller of `launch`
            // vouches for the arguments' meaning (its 1, 2, 3) (3).
            Ok(unsafe {
                result::module::launch_kernel(raw, grid, block, shared_mem_bytes, s, ptrs)
            }?)
        })?;
        // The kernel may run past the last drop of the module: that drop waits for it.
        self.module.launched.store(true, Ordering::Release);
        Ok(())
    }

    /// Tells the module that every kernel launched from it so far has finished, so that its
    /// unload need not wait for the context: for cuda-gl's own kernels, launched on its private
    /// stream only, whose owner waited for that stream ([`Context::finish_queued`]) before
    /// dropping the function.
    ///
    /// # Safety
    /// 1. Every kernel launched from this function's module has finished, and none is launched
    ///    from it afterwards until its last clone is dropped.
    pub(crate) unsafe fn kernels_done(&self) {
        self.module.launched.store(false, Ordering::Release);
    }
}

// SAFETY: `[T; N]` has the layout of the C struct `struct { T v[N]; }` passed by value: N values
// of T back to back, each one what a parameter of T's size expects (T: KernelParam), with no
// padding between them (a Rust size is a multiple of its alignment, as in C). `Function::launch`
// checks its total size against the PTX declaration, e.g. `.param .align 8 .b8 p[32]` for four
// surface handles.
unsafe impl<T: KernelParam, const N: usize> KernelParam for [T; N] {}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn reads_parameter_sizes_from_ptx() {
        let ptx = r#"
.visible .entry fill_u32(
	.param .u64 fill_u32_param_0,
	.param .u32 fill_u32_param_1,
	.param .u32 fill_u32_param_2
)
{ ret; }
.visible .entry takes_struct(
	.param .align 8 .b8 takes_struct_param_0[24],
	.param .f32 takes_struct_param_1
)
{ ret; }
.visible .entry no_params()
{ ret; }
"#;
        let params = parse_ptx_params(ptx).unwrap();
        assert_eq!(params["fill_u32"], vec![8, 4, 4]);
        assert_eq!(params["takes_struct"], vec![24, 4]);
        assert_eq!(params["no_params"], Vec::<usize>::new());
    }

    #[test]
    fn absurd_parameter_declarations_are_errors_not_overflows() {
        let overflow = format!(
            ".visible .entry big(\n\t.param .align 8 .b64 big_param_0[{}]\n)\n{{ ret; }}",
            usize::MAX / 2
        );
        let err = parse_ptx_params(&overflow).unwrap_err();
        assert!(err.contains("`big`") && err.contains("overflows"), "{err}");
        let not_a_number = ".visible .entry huge(\n\t.param .b8 huge_param_0[99999999999999999999999]\n)\n{ ret; }";
        let err = parse_ptx_params(not_a_number).unwrap_err();
        assert!(
            err.contains("`huge`") && err.contains("array length"),
            "{err}"
        );
        let largest = format!(
            ".visible .entry fits(\n\t.param .b8 fits_param_0[{}]\n)\n{{ ret; }}",
            usize::MAX
        );
        assert_eq!(
            parse_ptx_params(&largest).unwrap()["fits"],
            vec![usize::MAX]
        );
    }

    #[test]
    fn tuple_args_report_sizes_and_pointers() {
        let mut args = (1u64, 2u32, 3.0f32);
        assert_eq!(args.sizes(), vec![8, 4, 4]);
        assert_eq!(args.count(), 3);
        let n = args.with_pointers(|p| {
            // SAFETY: the pointers point into `args`, alive for this closure.
            unsafe { assert_eq!(*(p[1] as *const u32), 2) };
            p.len()
        });
        assert_eq!(n, 3);
    }
}
