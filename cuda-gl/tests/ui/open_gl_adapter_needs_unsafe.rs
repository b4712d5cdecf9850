// wgpu's GL backend calls GL through whatever context is current, unchecked: the adapter (and
// every device, queue and target made from it, by safe code too) must only be made, used and
// dropped where the context current now is current. `open_gl_device`, a safe fn, relies on that
// promise, so the adapter's maker is the one who gives it.
use cuda_gl::Context;
use cuda_gl::wgpu_interop::open_gl_adapter;
use std::sync::Arc;

fn adapter(instance: &wgpu::Instance, ctx: &Arc<Context>) -> cuda_gl::Result<wgpu::Adapter> {
    open_gl_adapter(instance, ctx)
}

fn main() {}
