//! A glow renderbuffer registered as a texture: the name would be looked up in the texture
//! namespace, where the same number is another object.
use std::num::NonZeroU32;
use std::sync::Arc;

fn register(ctx: &Arc<cuda_gl::Context>) {
    let renderbuffer = glow::NativeRenderbuffer(NonZeroU32::MIN);
    let _ = cuda_gl::RegisteredImage::register(
        ctx,
        renderbuffer,
        cuda_gl::ImageTarget::Texture2D,
        cuda_gl::RegisterFlags::NONE,
    );
}

fn main() {
    let _ = register;
}
