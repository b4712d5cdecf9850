//! A glow texture registered as a renderbuffer: the name would be looked up in the renderbuffer
//! namespace, where the same number is another object.
use std::num::NonZeroU32;
use std::sync::Arc;

fn register(ctx: &Arc<cuda_gl::Context>) {
    let texture = glow::NativeTexture(NonZeroU32::MIN);
    let _ = cuda_gl::RegisteredImage::register(
        ctx,
        texture,
        cuda_gl::ImageTarget::Renderbuffer,
        cuda_gl::RegisterFlags::NONE,
    );
}

fn register_as_renderbuffer(ctx: &Arc<cuda_gl::Context>) {
    let texture = glow::NativeTexture(NonZeroU32::MIN);
    let _ = cuda_gl::RegisteredImage::register_renderbuffer(
        ctx,
        texture,
        cuda_gl::RegisterFlags::NONE,
    );
}

fn main() {
    let _ = (register, register_as_renderbuffer);
}
