//! Entry points resolved by name, as an application resolves those that the `gl` crate's
//! core-profile bindings lack (compatibility-profile calls, extensions) or that it calls through
//! its own pointers.

use anyhow::{Result, bail, ensure};
use std::ffi::c_void;

/// The entry point `name` that `loader` resolves (e.g. `|name| gl.get_proc_address(name)` of
/// cuda-gl's `HeadlessContext`), as a function pointer of type `F`.
///
/// # Safety
/// `F` is a function pointer type whose signature is the entry point's (Khronos registry).
///
/// # Errors
/// The loader has no such entry point (a null address), or `F` is not pointer-sized.
pub unsafe fn entry_point<F: Copy>(
    loader: impl Fn(&str) -> *const c_void,
    name: &str,
) -> Result<F> {
    ensure!(
        size_of::<F>() == size_of::<*const c_void>(),
        "{name}: the type asked for is no function pointer"
    );
    let ptr = loader(name);
    if ptr.is_null() {
        bail!("no {name} in the context");
    }
    // SAFETY: a non-null address of `name` is that function, whose signature `F` is (the
    // caller's contract); `F` is pointer-sized (checked above), so the copy reads no more than
    // the pointer.
    Ok(unsafe { std::mem::transmute_copy::<*const c_void, F>(&ptr) })
}
