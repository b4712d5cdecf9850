//! OpenGL objects the benchmark needs, each created with a readable error instead of a panic and
//! deleted on drop, plus the few GL operations the cases time. The GL calls themselves are
//! gl-kit's (the workspace's GL boilerplate); what is here is the bench's: objects that name
//! themselves in errors and know their size, the "tiny GL op", and fences.
//!
//! Every function here must run on the thread whose headless context is current (the bench's
//! only thread) after `HeadlessContext` loaded the `gl` function pointers.

use anyhow::{Context as _, Result, bail, ensure};
use gl_kit::framebuffer::{self, Color};
use gl_kit::upload;
use gl_kit::{Kind, Owned, buffer, texture};

pub use gl_kit::blit::Blit;
pub use gl_kit::check;
pub use gl_kit::info::require_version;
pub use gl_kit::upload::Source;

/// A buffer object with `size` bytes of uninitialised storage (`GL_DYNAMIC_DRAW`).
#[derive(Debug)]
pub struct Buffer {
    name: Owned,
    size: usize,
}

impl Buffer {
    /// Creates the buffer; `what` names it in errors.
    pub fn new(size: usize, what: &str) -> Result<Buffer> {
        let name = buffer::create(size, gl::DYNAMIC_DRAW, None).context(what.to_string())?;
        Ok(Buffer::owning(name, size))
    }

    /// Owns buffer `name` of `size` bytes.
    fn owning(name: u32, size: usize) -> Buffer {
        Buffer {
            name: Owned::buffer(name),
            size,
        }
    }

    /// A buffer made while bound as the pixel unpack buffer (`GL_DYNAMIC_DRAW` storage), where
    /// [`Buffer::new`] makes one through the copy write binding; `what` names it in errors.
    pub fn made_as_unpack_buffer(size: usize, what: &str) -> Result<Buffer> {
        let name = buffer::create_bound_to(gl::PIXEL_UNPACK_BUFFER, size, gl::DYNAMIC_DRAW, None)
            .context(what.to_string())?;
        Ok(Buffer::owning(name, size))
    }

    /// A buffer of immutable storage that `glBufferSubData` writes, asked to live in system
    /// memory (`GL_DYNAMIC_STORAGE_BIT | GL_CLIENT_STORAGE_BIT`); `what` names it in errors.
    pub fn client_storage(size: usize, what: &str) -> Result<Buffer> {
        let flags = gl::DYNAMIC_STORAGE_BIT | gl::CLIENT_STORAGE_BIT;
        let name = buffer::create_storage(size, flags).context(what.to_string())?;
        Ok(Buffer::owning(name, size))
    }

    /// The GL name.
    pub fn name(&self) -> u32 {
        *self.name
    }

    /// Replaces the first `data.len()` bytes (`glBufferSubData`).
    pub fn write(&self, data: &[u8]) -> Result<()> {
        self.write_at(0, data)
    }

    /// Replaces `data.len()` bytes from byte `offset` (`glBufferSubData`).
    pub fn write_at(&self, offset: usize, data: &[u8]) -> Result<()> {
        ensure!(
            offset + data.len() <= self.size,
            "writing {} bytes at {offset} into a {}-byte buffer",
            data.len(),
            self.size
        );
        buffer::write(*self.name, offset, data)
    }

    /// Clears the first 64 bytes to a constant (`glClearBufferSubData`): the "tiny GL op".
    pub fn clear_64_bytes(&self, value: u32) -> Result<()> {
        ensure!(self.size >= 64, "the buffer is smaller than 64 bytes");
        // SAFETY: the buffer is live and at least 64 bytes long; `value` is one GL_UNSIGNED_INT
        // of GL_RED_INTEGER data, as the R32UI internal format takes.
        unsafe {
            gl::BindBuffer(gl::COPY_WRITE_BUFFER, *self.name);
            gl::ClearBufferSubData(
                gl::COPY_WRITE_BUFFER,
                gl::R32UI,
                0,
                64,
                gl::RED_INTEGER,
                gl::UNSIGNED_INT,
                (&raw const value).cast(),
            );
            gl::BindBuffer(gl::COPY_WRITE_BUFFER, 0);
        }
        Ok(())
    }
}

/// An immutable RGBA8 2D texture with one level, linear filtering.
#[derive(Debug)]
pub struct Texture {
    name: Owned,
    width: u32,
    height: u32,
}

impl Texture {
    /// Creates the texture; `what` names it in errors.
    pub fn new(width: u32, height: u32, what: &str) -> Result<Texture> {
        let name = texture::rgba8(width, height, 1, gl::LINEAR).context(what.to_string())?;
        Ok(Texture {
            name: Owned::texture(name),
            width,
            height,
        })
    }

    /// The GL name.
    pub fn name(&self) -> u32 {
        *self.name
    }

    /// Uploads the whole texture from `source` (`glTexSubImage2D`).
    fn upload(&self, source: Source<'_>) -> Result<()> {
        let size = (self.width, self.height, 1);
        upload::rgba8(gl::TEXTURE_2D, *self.name, size, source)
    }

    /// Uploads the whole texture from `pbo` at offset 0 (`glTexSubImage2D` with a bound
    /// `GL_PIXEL_UNPACK_BUFFER`): a GPU-side copy.
    pub fn upload_from_pbo(&self, pbo: &Buffer) -> Result<()> {
        let bytes = self.width as usize * self.height as usize * 4;
        ensure!(
            pbo.size >= bytes,
            "the PBO ({} bytes) is smaller than the texture ({bytes} bytes)",
            pbo.size
        );
        self.upload(Source::Buffer(pbo.name()))
    }

    /// Uploads the whole texture from host memory (`glTexSubImage2D`, no PBO bound).
    pub fn upload_from_host(&self, pixels: &[u8]) -> Result<()> {
        self.upload(Source::Host(pixels))
    }

    /// Uploads rows `first..first + rows` from host memory or from the start of a pixel buffer
    /// (`glTexSubImage2D` of a band).
    pub fn upload_rows(&self, (first, rows): (u32, u32), source: Source<'_>) -> Result<()> {
        ensure!(
            first + rows <= self.height,
            "rows {first}..{} of a {}-row texture",
            first + rows,
            self.height
        );
        upload::rgba8_rows(*self.name, self.width, (first, rows), source)
    }
}

/// A framebuffer object with one RGBA8 colour texture: where the frames are drawn. Its fields
/// drop in order: the framebuffer, then its texture.
#[derive(Debug)]
pub struct Framebuffer {
    name: Owned,
    color: Texture,
}

impl Framebuffer {
    /// Creates a complete `width` x `height` framebuffer; `what` names it in errors.
    pub fn new(width: u32, height: u32, what: &str) -> Result<Framebuffer> {
        let color = Texture::new(width, height, what)?;
        let name = framebuffer::with_color(Color::Texture(color.name()))
            .with_context(|| format!("{what}: a {width}x{height} framebuffer"))?;
        Ok(Framebuffer {
            name: Owned::new(Kind::Framebuffer, name),
            color,
        })
    }

    /// Draws with `blit` over all of the framebuffer, with texture `source` bound to `binding`
    /// (`GL_TEXTURE_2D`, `GL_TEXTURE_BUFFER`, ...) of texture unit 0.
    pub fn draw(&self, blit: &Blit, binding: u32, source: u32) {
        let size = (self.color.width, self.color.height);
        blit.draw((binding, source), *self.name, size);
    }
}

/// `glFlush`: submits the GL commands issued so far without waiting for them.
pub fn flush() {
    // SAFETY: no arguments; a context is current.
    unsafe { gl::Flush() };
}

/// `glFinish`: waits until every GL command issued so far has completed on the GPU.
pub fn finish() {
    // SAFETY: no arguments; a context is current.
    unsafe { gl::Finish() };
}

/// An immutable RGBA8 2D array texture with one level, deleted on drop.
#[derive(Debug)]
pub struct ArrayTexture {
    name: Owned,
}

impl ArrayTexture {
    /// A `w` x `h` texture of `layers` layers; `what` names it in the error.
    pub fn new((w, h): (u32, u32), layers: u32, what: &str) -> Result<ArrayTexture> {
        let name = texture::rgba8_array(w, h, layers).context(what.to_string())?;
        Ok(ArrayTexture {
            name: Owned::texture(name),
        })
    }

    /// The GL name.
    pub fn name(&self) -> u32 {
        *self.name
    }
}

/// How long a fence wait lasts before giving up (the GPU is hung by then).
const FENCE_TIMEOUT_NS: u64 = 10_000_000_000;

/// A GL fence after a frame's commands, deleted on drop.
#[derive(Debug)]
pub struct Fence(gl::types::GLsync);

impl Fence {
    /// Inserts a fence after every GL command issued so far.
    pub fn new() -> Result<Fence> {
        // SAFETY: no pointers; a context is current.
        let sync = unsafe { gl::FenceSync(gl::SYNC_GPU_COMMANDS_COMPLETE, 0) };
        ensure!(!sync.is_null(), "glFenceSync returned no fence");
        Ok(Fence(sync))
    }

    /// Waits until the GPU has passed the fence (flushing first, so it gets there).
    pub fn wait(self) -> Result<()> {
        // SAFETY: the fence is live (deleted only by Drop).
        let status =
            unsafe { gl::ClientWaitSync(self.0, gl::SYNC_FLUSH_COMMANDS_BIT, FENCE_TIMEOUT_NS) };
        match status {
            gl::ALREADY_SIGNALED | gl::CONDITION_SATISFIED => Ok(()),
            gl::TIMEOUT_EXPIRED => bail!("a frame's GL fence did not signal within 10 s"),
            other => bail!("glClientWaitSync failed (0x{other:04x})"),
        }
    }
}

impl Drop for Fence {
    fn drop(&mut self) {
        // SAFETY: the fence came from glFenceSync and is deleted once.
        unsafe { gl::DeleteSync(self.0) };
    }
}

/// Frames in flight over a ring of slots (textures, sets of textures), each with the fence of
/// GL's last use of it: a frame takes the next slot once that fence has passed, and fences its
/// own use. No other wait: no `glFinish`, no stream sync.
#[derive(Debug)]
pub struct FenceRing {
    fences: Vec<Option<Fence>>,
    next: usize,
}

impl FenceRing {
    /// A ring of `slots` slots (at least one), none used yet.
    pub fn new(slots: usize) -> FenceRing {
        FenceRing {
            fences: (0..slots.max(1)).map(|_| None).collect(),
            next: 0,
        }
    }

    /// The next slot, once GL's last use of it has passed (its fence waited for, at most
    /// 10 s: an error past that).
    pub fn take(&mut self) -> Result<usize> {
        let slot = self.next;
        self.next = (slot + 1) % self.fences.len();
        if let Some(fence) = self.fences.get_mut(slot).and_then(Option::take) {
            fence.wait()?;
        }
        Ok(slot)
    }

    /// Fences the GL commands issued so far as `slot`'s use, and flushes them.
    pub fn fence(&mut self, slot: usize) -> Result<()> {
        let fence = Fence::new()?;
        match self.fences.get_mut(slot) {
            Some(f) => *f = Some(fence),
            None => bail!("ring slot {slot} of {} is out of range", self.fences.len()),
        }
        flush();
        Ok(())
    }

    /// Waits for every pending fence: GL runs its commands in order, so only the last one
    /// issued waits long.
    pub fn drain(&mut self) -> Result<()> {
        for fence in self.fences.iter_mut().filter_map(Option::take) {
            fence.wait()?;
        }
        Ok(())
    }
}
