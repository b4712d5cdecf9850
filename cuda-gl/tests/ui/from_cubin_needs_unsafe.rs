// `cuModuleLoadDataEx` takes no length: header checks refuse junk, but the driver follows offsets
// inside sections that no check bounds, so loading a cubin is the caller's promise.
use cuda_gl::{Context, Module};
use std::sync::Arc;

fn load(ctx: &Arc<Context>, bytes: &[u8]) -> cuda_gl::Result<Module> {
    Module::from_cubin(ctx, bytes)
}

fn main() {}
