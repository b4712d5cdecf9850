//! A glow name registered as another kind of object: a renderbuffer as a texture, a texture as
//! a renderbuffer (by its target, and by `register_renderbuffer`). GL would look the name up in
//! the other kind's namespace, where the same number is another object.
use cuda_gl::{Context, ImageTarget, RegisterFlags, RegisteredImage};
use glow::{NativeRenderbuffer, NativeTexture};
use std::num::NonZeroU32;
use std::sync::Arc;

fn register(ctx: &Arc<Context>) {
    let (name, flags) = (NonZeroU32::MIN, RegisterFlags::NONE);
    let _ = RegisteredImage::register(ctx, NativeRenderbuffer(name), ImageTarget::Texture2D, flags);
    let _ = RegisteredImage::register(ctx, NativeTexture(name), ImageTarget::Renderbuffer, flags);
    let _ = RegisteredImage::register_renderbuffer(ctx, NativeTexture(name), flags);
}

fn main() {
    let _ = register;
}
