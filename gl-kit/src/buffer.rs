//! Buffer objects: create one, write it, copy between two, read it back.
//!
//! The kit binds buffers to `GL_COPY_WRITE_BUFFER` and `GL_COPY_READ_BUFFER` (binding points
//! that nothing draws with; [`create_bound_to`] makes one through the binding point asked for)
//! and leaves them at 0.

use crate::object::Kind;
use crate::plain::{self, Plain};
use anyhow::{Context as _, Result, ensure};
use gl::types::{GLenum, GLsizeiptr, GLuint};

/// `bytes` as GL's size type.
fn gl_size(bytes: usize) -> Result<GLsizeiptr> {
    GLsizeiptr::try_from(bytes).with_context(|| format!("{bytes} bytes is too large for GL"))
}

/// A buffer object of `bytes` bytes (`glBufferData` with `usage`: `gl::DYNAMIC_DRAW`,
/// `gl::STREAM_DRAW`, ...), filled from the first `bytes` bytes of `data` when given, else with
/// undefined contents. Delete it with [`delete`] (or own it with [`Owned`](crate::Owned)).
///
/// # Errors
/// `data` shorter than `bytes`, or a GL error (out of memory).
pub fn create(bytes: usize, usage: GLenum, data: Option<&[u8]>) -> Result<GLuint> {
    create_bound_to(gl::COPY_WRITE_BUFFER, bytes, usage, data)
}

/// As [`create`], made while bound to `target` (a driver may place a buffer by the binding it
/// first gets: `gl::PIXEL_UNPACK_BUFFER` makes one as a pixel buffer is made), left at 0.
///
/// # Errors
/// As [`create`].
pub fn create_bound_to(
    target: GLenum,
    bytes: usize,
    usage: GLenum,
    data: Option<&[u8]>,
) -> Result<GLuint> {
    let size = gl_size(bytes)?;
    if let Some(data) = data {
        ensure!(
            data.len() >= bytes,
            "{} bytes of data for a buffer of {bytes} bytes",
            data.len()
        );
    }
    let pointer = data.map_or(std::ptr::null(), |d| d.as_ptr().cast());
    let mut name = 0;
    // SAFETY: a context is current (the crate's contract); `name` receives one name; the data
    // pointer is null (storage only) or valid for `bytes` bytes (checked above).
    unsafe {
        gl::GenBuffers(1, &mut name);
        gl::BindBuffer(target, name);
        gl::BufferData(target, size, pointer, usage);
        gl::BindBuffer(target, 0);
    }
    if let Err(e) = crate::check(&format!("creating a buffer of {bytes} bytes")) {
        delete(name);
        return Err(e);
    }
    Ok(name)
}

/// A buffer object of `bytes` bytes of immutable storage (`glBufferStorage` with `flags`:
/// `gl::DYNAMIC_STORAGE_BIT` lets `glBufferSubData` write it, `gl::CLIENT_STORAGE_BIT` asks for
/// system memory), with undefined contents. Needs OpenGL 4.4 or `GL_ARB_buffer_storage`.
///
/// # Errors
/// A GL error (no `glBufferStorage`, out of memory).
pub fn create_storage(bytes: usize, flags: gl::types::GLbitfield) -> Result<GLuint> {
    let size = gl_size(bytes)?;
    ensure!(
        gl::BufferStorage::is_loaded(),
        "no glBufferStorage (OpenGL 4.4)"
    );
    let mut name = 0;
    // SAFETY: a context is current (the crate's contract); `name` receives one name; a null
    // pointer asks for storage only.
    unsafe {
        gl::GenBuffers(1, &mut name);
        gl::BindBuffer(gl::COPY_WRITE_BUFFER, name);
        gl::BufferStorage(gl::COPY_WRITE_BUFFER, size, std::ptr::null(), flags);
        gl::BindBuffer(gl::COPY_WRITE_BUFFER, 0);
    }
    if let Err(e) = crate::check(&format!("creating {bytes} bytes of buffer storage")) {
        delete(name);
        return Err(e);
    }
    Ok(name)
}

/// Replaces bytes `offset..offset + data.len()` of buffer `buffer` with `data`
/// (`glBufferSubData`). GL refuses a range past the buffer's end (`GL_INVALID_VALUE`, pending
/// for the caller's next [`check`](fn@crate::check)); no error is read here, so that a timed loop
/// may call it.
///
/// # Errors
/// A range too large for GL's offsets.
pub fn write(buffer: GLuint, offset: usize, data: &[u8]) -> Result<()> {
    let (offset, size) = (gl_size(offset)?, gl_size(data.len())?);
    // SAFETY: a context is current; `data` is valid for `size` bytes; GL checks the range
    // against the buffer's size and writes nothing outside it.
    unsafe {
        gl::BindBuffer(gl::COPY_WRITE_BUFFER, buffer);
        gl::BufferSubData(gl::COPY_WRITE_BUFFER, offset, size, data.as_ptr().cast());
        gl::BindBuffer(gl::COPY_WRITE_BUFFER, 0);
    }
    Ok(())
}

/// Copies the first `bytes` bytes of buffer `from` to byte `at` of buffer `to`, on the GPU, in
/// GL's queue (`glCopyBufferSubData`), then checks for a GL error (a range past either end).
///
/// # Errors
/// A GL error.
pub fn copy(from: GLuint, to: GLuint, at: usize, bytes: usize) -> Result<()> {
    let (at, size) = (gl_size(at)?, gl_size(bytes)?);
    // SAFETY: a context is current; GL checks both ranges against the buffers' sizes.
    unsafe {
        gl::BindBuffer(gl::COPY_READ_BUFFER, from);
        gl::BindBuffer(gl::COPY_WRITE_BUFFER, to);
        gl::CopyBufferSubData(gl::COPY_READ_BUFFER, gl::COPY_WRITE_BUFFER, 0, at, size);
        gl::BindBuffer(gl::COPY_READ_BUFFER, 0);
        gl::BindBuffer(gl::COPY_WRITE_BUFFER, 0);
    }
    crate::check("copying between buffers")
}

/// The first `len` values of type `T` in buffer `buffer` (`glGetBufferSubData`). Any GL work
/// that wrote the buffer, and any CUDA work ordered before an unmap, is done before they arrive.
///
/// # Errors
/// A GL error (a buffer smaller than `len` values).
pub fn read<T: Plain>(buffer: GLuint, len: usize) -> Result<Vec<T>> {
    let mut data = vec![T::default(); len];
    let size = gl_size(size_of_val(data.as_slice()))?;
    // SAFETY: a context is current; GL writes exactly `size` bytes into `data`, which holds that
    // many (or nothing, with GL_INVALID_VALUE, when the buffer is smaller), and any bytes are a
    // valid `T` (plain data).
    unsafe {
        gl::BindBuffer(gl::COPY_READ_BUFFER, buffer);
        gl::GetBufferSubData(gl::COPY_READ_BUFFER, 0, size, data.as_mut_ptr().cast());
        gl::BindBuffer(gl::COPY_READ_BUFFER, 0);
    }
    crate::check("reading a buffer back")?;
    Ok(data)
}

/// [`create`] filled from `values`, exactly their size.
///
/// # Errors
/// As [`create`].
pub fn create_from<T: Plain>(values: &[T], usage: GLenum) -> Result<GLuint> {
    let bytes = plain::bytes_of(values);
    create(bytes.len(), usage, Some(bytes))
}

/// Deletes buffer `name` (GL ignores 0 and names that are not buffers).
pub fn delete(name: GLuint) {
    Kind::Buffer.delete(name);
}
