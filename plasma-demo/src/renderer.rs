//! The OpenGL side (3.3 core): the frame's texture, the pixel buffer that feeds it, an offscreen
//! framebuffer for headless runs, and the fullscreen-triangle program that shows the texture.
//!
//! Every method needs the GL context that created the [`Renderer`] to be current on the calling
//! thread, and the `gl` function pointers loaded (the window or the headless context does both).
//! The renderer must be dropped while that context is still current. The GL objects themselves
//! are made, drawn and read with `gl_kit`, the workspace's GL boilerplate.

use crate::cli::Size;
use anyhow::{Context as _, Result, bail};
use gl::types::{GLint, GLuint};
use gl_kit::blit::Blit;
use gl_kit::framebuffer::{self, Color};
use gl_kit::upload::{self, Source};
use gl_kit::{Kind, Owned, buffer, info, readback, texture};

/// How the frame's pixels reach the texture; decides what the renderer allocates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Upload {
    /// Through a pixel buffer object: `glTexSubImage2D` from the bound `GL_PIXEL_UNPACK_BUFFER`.
    PixelBuffer,
    /// Written into the texture in place (CUDA surface); no pixel buffer.
    InPlace,
    /// The backend owns the texture (a `cuda_gl::display::DisplayTarget`'s) and gives its name
    /// with [`Renderer::set_texture`]; the renderer allocates neither texture nor pixel buffer.
    External,
}

/// Where the frame is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The default framebuffer of a window.
    Window,
    /// An offscreen framebuffer with an RGBA8 renderbuffer of the frame's size (headless
    /// contexts have no default framebuffer).
    Offscreen,
}

/// `GL_VENDOR`, `GL_RENDERER` and `GL_VERSION` of the current context.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct GlInfo {
    /// `GL_VENDOR`, e.g. `NVIDIA Corporation` or `Mesa`.
    pub vendor: String,
    /// `GL_RENDERER`, e.g. `NVIDIA H200/PCIe/SSE2` or `llvmpipe (LLVM 15.0.6, 256 bits)`.
    pub renderer: String,
    /// `GL_VERSION`.
    pub version: String,
}

impl GlInfo {
    /// Reads the strings of the current context (empty where GL has none).
    pub fn current() -> GlInfo {
        let string = |name| info::string(name).unwrap_or_default();
        GlInfo {
            vendor: string(gl::VENDOR),
            renderer: string(gl::RENDERER),
            version: string(gl::VERSION),
        }
    }
}

/// The GL objects of one frame size, deleted when they drop.
#[derive(Debug)]
struct SizedObjects {
    texture: Owned,
    /// Whether the texture has immutable storage (`glTexStorage2D`).
    immutable: bool,
    /// The pixel buffer, for [`Upload::PixelBuffer`].
    pbo: Option<Owned>,
    /// The offscreen framebuffer and its renderbuffer, for [`Target::Offscreen`].
    offscreen: Option<(Owned, Owned)>,
}

impl SizedObjects {
    /// No objects (texture 0, which GL's deletes ignore).
    fn none() -> SizedObjects {
        SizedObjects {
            texture: Owned::texture(0),
            immutable: false,
            pbo: None,
            offscreen: None,
        }
    }
}

/// The GL objects of the demo: the full-screen triangle's program and vertex array, and the
/// frame-sized texture, pixel buffer and offscreen framebuffer.
#[derive(Debug)]
pub struct Renderer {
    size: Size,
    upload: Upload,
    target: Target,
    blit: Blit,
    objects: SizedObjects,
    /// The backend's texture, for [`Upload::External`] (0 until set).
    external: GLuint,
}

impl Renderer {
    /// Creates the program, the vertex array and the frame-sized objects.
    ///
    /// # Errors
    /// When the context is older than OpenGL 3.3, the size exceeds `GL_MAX_TEXTURE_SIZE`, a
    /// shader does not compile, or a GL call fails.
    pub fn new(size: Size, upload: Upload, target: Target) -> Result<Renderer> {
        if !gl::CreateShader::is_loaded() || !gl::GenVertexArrays::is_loaded() {
            bail!("the OpenGL context lacks OpenGL 3.3 core functions (shaders, vertex arrays)");
        }
        // Clear any error left by context creation.
        gl_kit::check::take_errors();
        let blit = Blit::new()?;
        // SAFETY: a context is current (module contract); no pointers are passed.
        unsafe {
            gl::Disable(gl::DEPTH_TEST);
            gl::Disable(gl::BLEND);
        }
        let renderer = Renderer {
            size,
            upload,
            target,
            blit,
            objects: create_sized(size, upload, target)?,
            external: 0,
        };
        gl_kit::check("creating the renderer")?;
        Ok(renderer)
    }

    /// Replaces the texture, pixel buffer and offscreen framebuffer with ones of `size`. Any
    /// CUDA registration of the old objects must have been dropped before. With
    /// [`Upload::External`], the backend resizes its texture and gives its name again.
    ///
    /// # Errors
    /// As [`Renderer::new`].
    pub fn resize(&mut self, size: Size) -> Result<()> {
        // The old objects go first, so that both sizes are never allocated at once.
        self.objects = SizedObjects::none();
        self.objects = create_sized(size, self.upload, self.target)?;
        self.size = size;
        gl_kit::check(&format!("resizing the frame to {size}"))
    }

    /// The frame size.
    pub fn size(&self) -> Size {
        self.size
    }

    /// How pixels reach the texture.
    pub fn upload(&self) -> Upload {
        self.upload
    }

    /// Where the frame is drawn.
    pub fn target(&self) -> Target {
        self.target
    }

    /// The frame's `GL_TEXTURE_2D` (RGBA8, one level): the renderer's own, or with
    /// [`Upload::External`] the backend's (0 until [`Renderer::set_texture`]).
    pub fn texture(&self) -> GLuint {
        match self.upload {
            Upload::External => self.external,
            Upload::PixelBuffer | Upload::InPlace => *self.objects.texture,
        }
    }

    /// With [`Upload::External`]: draws and reads back `texture` (an RGBA8 `GL_TEXTURE_2D` of
    /// the frame size, owned by the backend, which must keep it alive while it is drawn).
    ///
    /// # Errors
    /// When the renderer owns its texture (another [`Upload`]).
    pub fn set_texture(&mut self, texture: GLuint) -> Result<()> {
        if self.upload != Upload::External {
            bail!("this renderer draws its own texture ({:?})", self.upload);
        }
        self.external = texture;
        Ok(())
    }

    /// Whether the texture has immutable storage (`glTexStorage2D`, GL 4.2 or
    /// `ARB_texture_storage`); otherwise it was made with `glTexImage2D`.
    pub fn texture_is_immutable(&self) -> bool {
        self.objects.immutable
    }

    /// The pixel buffer object (`size.width * size.height * 4` bytes), for
    /// [`Upload::PixelBuffer`].
    pub fn pixel_buffer(&self) -> Option<GLuint> {
        self.objects.pbo.as_deref().copied()
    }

    /// Copies `pixels` (RGBA8, `size` bytes) into the pixel buffer with `glBufferSubData`.
    ///
    /// # Errors
    /// Without a pixel buffer, or when `pixels` is not exactly one frame.
    pub fn write_pixel_buffer(&self, pixels: &[u8]) -> Result<()> {
        let Some(pbo) = self.pixel_buffer() else {
            bail!("this renderer has no pixel buffer (the surface path writes the texture)");
        };
        if pixels.len() != self.size.rgba_bytes() {
            bail!(
                "{} bytes of pixels for a {} frame of {} bytes",
                pixels.len(),
                self.size,
                self.size.rgba_bytes()
            );
        }
        buffer::write(pbo, 0, pixels)
    }

    /// `glTexSubImage2D` of the whole texture from the pixel buffer (a copy on the GPU).
    ///
    /// # Errors
    /// Without a pixel buffer.
    pub fn upload_from_pixel_buffer(&self) -> Result<()> {
        let Some(pbo) = self.pixel_buffer() else {
            bail!("this renderer has no pixel buffer (the surface path writes the texture)");
        };
        self.upload_from(pbo)
    }

    /// Copies one RGBA8 frame of the texture's size from GL buffer `buffer` (a pixel buffer, or
    /// a frame stream's slot) into the texture with `glTexSubImage2D`, on the GPU. GL refuses a
    /// buffer smaller than one frame with an error, which the next check reports.
    ///
    /// # Errors
    /// None in practice (a size beyond GL's integers, which the renderer's sizes never are).
    pub fn upload_from(&self, buffer: GLuint) -> Result<()> {
        let size = (self.size.width, self.size.height, 1);
        upload::rgba8(gl::TEXTURE_2D, self.texture(), size, Source::Buffer(buffer))
    }

    /// Draws the texture over the whole `viewport` (the window's framebuffer size, or the
    /// offscreen framebuffer).
    pub fn draw(&self, viewport: Size) {
        let fbo = self.objects.offscreen.as_ref().map_or(0, |(fbo, _)| **fbo);
        let viewport = match self.target {
            Target::Window => viewport,
            Target::Offscreen => self.size,
        };
        let source = (gl::TEXTURE_2D, self.texture());
        self.blit
            .draw(source, fbo, (viewport.width, viewport.height));
    }

    /// Reads the texture back as RGBA8 rows, bottom row first (texture row 0 first, as the
    /// kernels and `render_cpu` lay out a frame).
    ///
    /// # Errors
    /// On a GL error.
    pub fn read_texture(&self) -> Result<Vec<u8>> {
        readback::texture(gl::TEXTURE_2D, self.texture(), 0)
    }

    /// Reads back what [`Renderer::draw`] drew into the offscreen framebuffer: RGBA8, bottom
    /// row first. `None` for a window (read its pixels with the window system's tools).
    ///
    /// # Errors
    /// On a GL error.
    pub fn read_drawn(&self) -> Result<Option<Vec<u8>>> {
        let Some((fbo, _)) = &self.objects.offscreen else {
            return Ok(None);
        };
        let size = (self.size.width, self.size.height);
        readback::framebuffer(**fbo, size).map(Some)
    }

    /// Waits until OpenGL has finished every command (`glFinish`).
    pub fn finish(&self) {
        // SAFETY: a context is current.
        unsafe { gl::Finish() };
    }
}

/// The texture, pixel buffer and offscreen framebuffer of `size`.
fn create_sized(size: Size, upload: Upload, target: Target) -> Result<SizedObjects> {
    let mut max: GLint = 0;
    // SAFETY: a context is current; `max` is a valid out-pointer for one integer.
    unsafe { gl::GetIntegerv(gl::MAX_TEXTURE_SIZE, &mut max) };
    let limit = u32::try_from(max).unwrap_or(0);
    if size.width > limit || size.height > limit {
        bail!("the frame size {size} exceeds this OpenGL's GL_MAX_TEXTURE_SIZE of {max}");
    }
    let allocating = || format!("allocating the {size} texture and buffers");
    let (texture, immutable) = match upload {
        Upload::External => (Owned::texture(0), false),
        Upload::PixelBuffer | Upload::InPlace => create_texture(size)?,
    };
    let pbo = match upload {
        Upload::PixelBuffer => Some(buffer::create(size.rgba_bytes(), gl::STREAM_DRAW, None)),
        Upload::InPlace | Upload::External => None,
    };
    let pbo = pbo.transpose().with_context(allocating)?.map(Owned::buffer);
    let offscreen = match target {
        Target::Window => None,
        Target::Offscreen => Some(create_offscreen(size)?),
    };
    gl_kit::check(&allocating()).context("out of GPU memory, or a size the driver refuses")?;
    Ok(SizedObjects {
        texture,
        immutable,
        pbo,
        offscreen,
    })
}

/// The renderer's own RGBA8 texture of `size`, and whether its storage is immutable.
fn create_texture(size: Size) -> Result<(Owned, bool)> {
    let (w, h) = (size.width, size.height);
    let immutable = gl::TexStorage2D::is_loaded();
    let texture = if immutable {
        texture::rgba8(w, h, 1, gl::NEAREST)
    } else {
        texture::rgba8_mutable(w, h, gl::NEAREST)
    }
    .with_context(|| format!("allocating the {size} texture"))?;
    let texture = Owned::texture(texture);
    let parameters = [
        (gl::TEXTURE_WRAP_S, gl::CLAMP_TO_EDGE),
        (gl::TEXTURE_WRAP_T, gl::CLAMP_TO_EDGE),
        (gl::TEXTURE_BASE_LEVEL, 0),
        (gl::TEXTURE_MAX_LEVEL, 0),
    ];
    texture::set_parameters(gl::TEXTURE_2D, *texture, &parameters);
    Ok((texture, immutable))
}

/// An offscreen framebuffer with an RGBA8 renderbuffer of `size`.
fn create_offscreen(size: Size) -> Result<(Owned, Owned)> {
    let what = || format!("the offscreen framebuffer ({size} RGBA8)");
    let rbo = framebuffer::renderbuffer_rgba8(size.width, size.height).with_context(what)?;
    let rbo = Owned::new(Kind::Renderbuffer, rbo);
    let fbo = framebuffer::with_color(Color::Renderbuffer(*rbo)).with_context(what)?;
    Ok((Owned::new(Kind::Framebuffer, fbo), rbo))
}
