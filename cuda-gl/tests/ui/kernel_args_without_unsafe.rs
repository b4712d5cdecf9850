// A hand implementation of KernelArgs must be `unsafe impl`: launch trusts its pointers.
use cuda_gl::KernelArgs;
use std::ffi::c_void;

struct MyArgs {
    value: u32,
}

impl KernelArgs for MyArgs {
    fn sizes(&self) -> Vec<usize> {
        vec![4]
    }
    fn count(&self) -> usize {
        1
    }
    fn with_pointers<R>(&mut self, f: impl FnOnce(&mut [*mut c_void]) -> R) -> R {
        f(&mut [(&mut self.value as *mut u32).cast()])
    }
}

fn main() {}
