//! GL helpers of the GPU tests: textures, buffers and renderbuffers made, registered, filled and
//! read back (over gl-kit, panicking on a GL error as a test should). Re-exported by `gpu`.

use cuda_gl::{Context, ImageTarget, RegisterFlags, RegisteredBuffer, RegisteredImage};
use gl_kit::upload::{self, Source};
use std::sync::Arc;

/// Registers texture `tex` for surface writes that replace its contents.
pub fn register_for_surface(ctx: &Arc<Context>, tex: u32, target: ImageTarget) -> RegisteredImage {
    RegisteredImage::register(
        ctx,
        tex,
        target,
        RegisterFlags::SURFACE_LOAD_STORE | RegisterFlags::WRITE_DISCARD,
    )
    .unwrap()
}

/// A one-level `width` x `height` RGBA8 2D texture, registered by [`register_for_surface`].
pub fn surface_texture_rgba8(
    ctx: &Arc<Context>,
    width: usize,
    height: usize,
) -> (u32, RegisteredImage) {
    let tex = gl_texture_rgba8(width as i32, height as i32, 1);
    (tex, register_for_surface(ctx, tex, ImageTarget::Texture2D))
}

/// Fails the test when GL has an error pending (each one named).
pub fn check_gl() {
    gl_kit::check("the test's GL calls").unwrap();
}

/// A GL buffer of `bytes` bytes, filled from `data` (at least `bytes` bytes) when given.
pub fn gl_buffer(bytes: usize, data: Option<&[u32]>) -> u32 {
    let data = data.map(gl_kit::plain::bytes_of);
    gl_kit::buffer::create(bytes, gl::DYNAMIC_DRAW, data).unwrap()
}

/// Reads a GL buffer's first `words` u32 words.
pub fn read_gl_buffer(name: u32, words: usize) -> Vec<u32> {
    gl_kit::buffer::read(name, words).unwrap()
}

/// A GL buffer of `bytes` bytes (contents undefined) and its registration in `ctx`.
pub fn registered_buffer(
    ctx: &Arc<Context>,
    bytes: usize,
    flags: RegisterFlags,
) -> (u32, RegisteredBuffer) {
    let name = gl_buffer(bytes, None);
    let res = RegisteredBuffer::register(ctx, name, flags).unwrap();
    (name, res)
}

/// Registers GL buffer `name`, which is registered in `ctx` already, again: checks that this
/// is refused as `AlreadyRegistered` and returns the error.
pub fn second_registration_refused(ctx: &Arc<Context>, name: u32) -> cuda_gl::Error {
    let err = RegisteredBuffer::register(ctx, name, RegisterFlags::NONE).unwrap_err();
    eprintln!("{err}");
    assert!(
        matches!(err, cuda_gl::Error::AlreadyRegistered { .. }),
        "{err:?}"
    );
    err
}

/// Checks that `result` is a refusal before the driver: a [`cuda_gl::Error::Usage`] whose
/// [`cuda_gl::UsageError`] passes `which` (e.g. `|e| matches!(e, UsageError::ReadOnlyMapping {
/// .. })`) and whose message contains `says`.
#[track_caller]
pub fn assert_refused<T>(
    result: cuda_gl::Result<T>,
    which: impl Fn(&cuda_gl::UsageError) -> bool,
    says: &str,
) {
    match result {
        Err(cuda_gl::Error::Usage(e)) if which(&e) && e.to_string().contains(says) => {}
        Err(err) => panic!("expected a refusal that says {says:?}, got {err:?}"),
        Ok(_) => panic!("expected a refusal that says {says:?}, but the call succeeded"),
    }
}

/// Drops `res` (its unregistration, whose failure is recorded for `check_drop_errors`), then
/// deletes GL buffer `name`: the registration goes before the GL object.
pub fn drop_and_delete_buffer(res: RegisteredBuffer, name: u32) {
    drop(res);
    delete_buffer(name);
}

/// Unregisters `res`, checks that no drop error was recorded in `ctx`, and deletes GL buffer
/// `name`.
pub fn unregister_and_delete(ctx: &Context, res: RegisteredBuffer, name: u32) {
    res.unregister().unwrap();
    ctx.check_drop_errors().unwrap();
    delete_buffer(name);
}

/// A GL texture or buffer that is deleted when this drops, also when the test fails half-way
/// (gl-kit's owned name). Bind it to a name (`_tex` keeps it, `_` deletes it at once) before
/// registering it: locals drop in reverse order, so the registration drops (is unregistered)
/// before the object is deleted. Derefs to the GL name.
pub use gl_kit::Owned as GlObject;
pub use gl_kit::buffer::delete as delete_buffer;
pub use gl_kit::texture::delete as delete_texture;

/// A size or count of the tests' GL objects as gl-kit takes it.
fn dim(value: impl TryInto<u32>) -> u32 {
    value.try_into().ok().expect("a size of at least 0")
}

/// A texture of `target` with `levels` levels of immutable RGBA8 storage, `width` x `height`
/// and, for the targets of `glTexStorage3D` (`TEXTURE_3D`, `TEXTURE_2D_ARRAY`), `depth` slices
/// or layers (ignored for the others). Contents undefined, filters left at GL's defaults.
pub fn gl_texture_storage(
    target: gl::types::GLenum,
    levels: i32,
    width: i32,
    height: i32,
    depth: i32,
) -> u32 {
    let size = (dim(width), dim(height), dim(depth));
    gl_kit::texture::storage(target, dim(levels), size).unwrap()
}

/// An RGBA8 2D texture with `levels` mip levels of immutable storage, nearest filtering.
pub fn gl_texture_rgba8(width: i32, height: i32, levels: i32) -> u32 {
    let (w, h) = (dim(width), dim(height));
    gl_kit::texture::rgba8(w, h, dim(levels), gl::NEAREST).unwrap()
}

/// Reads level `level` of an RGBA8 2D texture as packed u32 texels.
pub fn read_texture_rgba8(name: u32, width: usize, height: usize, level: i32) -> Vec<u32> {
    read_tex_image_rgba8(gl::TEXTURE_2D, name, level, width * height)
}

/// An RGBA8 2D array texture of `layers` layers of `width` x `height`, one level, filled with
/// `data` (every texel of every layer) when given.
pub fn gl_texture_array_rgba8(
    width: usize,
    height: usize,
    layers: usize,
    data: Option<&[u32]>,
) -> u32 {
    let size = (dim(width), dim(height), dim(layers));
    let name = gl_kit::texture::rgba8_array(size.0, size.1, size.2).unwrap();
    if let Some(data) = data {
        assert_eq!(data.len(), width * height * layers);
        let pixels = Source::Host(gl_kit::plain::bytes_of(data));
        upload::rgba8(gl::TEXTURE_2D_ARRAY, name, size, pixels).unwrap();
        check_gl();
    }
    name
}

/// Every layer of a `width` x `height` RGBA8 2D array texture, as packed u32 texels, layer after
/// layer.
pub fn read_texture_array_rgba8(name: u32, width: usize, height: usize, layers: usize) -> Vec<u32> {
    read_tex_image_rgba8(gl::TEXTURE_2D_ARRAY, name, 0, width * height * layers)
}

/// `glGetTexImage` of level `level` of texture `name` bound to `target`, as packed RGBA8 u32
/// texels (every layer, for an array); the level must have `texels` texels.
pub fn read_tex_image_rgba8(
    target: gl::types::GLenum,
    name: u32,
    level: i32,
    texels: usize,
) -> Vec<u32> {
    let out = gl_kit::readback::texture(target, name, level).unwrap();
    assert_eq!(
        out.len(),
        texels,
        "texels in level {level} of texture {name}"
    );
    out
}

/// A renderbuffer with RGBA8 storage of `width` x `height`.
pub fn gl_renderbuffer_rgba8(width: i32, height: i32) -> u32 {
    gl_kit::framebuffer::renderbuffer_rgba8(dim(width), dim(height)).unwrap()
}

/// Deletes renderbuffer `name`.
pub fn delete_renderbuffer(name: u32) {
    gl_kit::Kind::Renderbuffer.delete(name);
}

/// `glTexSubImage2D` of a whole `width` x `height` RGBA8 texture from pixel buffer `pbo` (a
/// GPU-side copy), then checks for a GL error.
pub fn upload_from_pbo(pbo: u32, tex: u32, width: usize, height: usize) {
    let size = (dim(width), dim(height), 1);
    upload::rgba8(gl::TEXTURE_2D, tex, size, Source::Buffer(pbo)).unwrap();
    check_gl();
}

/// `glTexSubImage2D` of `texels` (`width` x `height` packed RGBA8) into level 0 of 2D texture
/// `tex`, from client memory, then checks for a GL error.
pub fn upload_texels_rgba8(tex: u32, width: usize, height: usize, texels: &[u32]) {
    assert_eq!(texels.len(), width * height);
    let (size, pixels) = (
        (dim(width), dim(height), 1),
        gl_kit::plain::bytes_of(texels),
    );
    upload::rgba8(gl::TEXTURE_2D, tex, size, Source::Host(pixels)).unwrap();
    check_gl();
}

/// The debug label of GL buffer `name` in the current context (empty when it has none).
pub fn buffer_label(name: u32) -> String {
    let mut buf = [0u8; 64];
    let mut len = 0;
    // SAFETY: a context is current; `buf` has room for the stated size, `len` is valid.
    unsafe {
        gl::GetObjectLabel(
            gl::BUFFER,
            name,
            buf.len() as i32,
            &mut len,
            buf.as_mut_ptr().cast(),
        )
    };
    String::from_utf8_lossy(&buf[..len.max(0) as usize]).into_owned()
}

/// The handle of the EGL context current on this thread, asked of libEGL.
pub fn egl_current_context() -> usize {
    // SAFETY: libEGL is already loaded by the test's context; `eglGetCurrentContext` takes no
    // arguments and returns a handle.
    unsafe {
        let lib = libloading::Library::new("libEGL.so.1").unwrap();
        let f: libloading::Symbol<'_, unsafe extern "C" fn() -> *mut std::ffi::c_void> =
            lib.get(b"eglGetCurrentContext\0").unwrap();
        f() as usize
    }
}

/// Prints the EGL handles of a destroyed context (`old`) and of the context made after it
/// (`new`), and whether the new one got the old one's handle value.
pub fn print_handle_reuse(old: usize, new: usize) {
    let how = if old == new {
        "the handle value was reused"
    } else {
        "another handle"
    };
    eprintln!("old context {old:#x}, new context {new:#x}: {how}");
}

/// Sets the debug label of GL buffer `name` in the current context, as an application may.
pub fn set_buffer_label(name: u32, label: &str) {
    // SAFETY: a context is current; the pointer and length describe `label`.
    unsafe { gl::ObjectLabel(gl::BUFFER, name, label.len() as i32, label.as_ptr().cast()) };
    check_gl();
}

/// Whether `name` is a GL object of the current context, asked with `is` (`gl::IsBuffer`,
/// `gl::IsTexture`, `gl::IsFramebuffer`, ...).
pub fn gl_is(is: unsafe fn(u32) -> u8, name: u32) -> bool {
    // SAFETY: a context is current (the callers'); the `glIs*` queries change no state.
    unsafe { is(name) == gl::TRUE }
}
