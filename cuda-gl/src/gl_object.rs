//! What CUDA can register of OpenGL: the image targets, and the flags of a registration and of
//! its mappings. Plain values with no dependencies, so that errors and GL probes can name them
//! without depending on the registration code.

bitflags::bitflags! {
    /// How CUDA will use a registered GL object (`CU_GRAPHICS_REGISTER_FLAGS_*`).
    ///
    /// Combinations that make no sense are rejected before the driver is called:
    /// `READ_ONLY | WRITE_DISCARD`, and the image-only flags on a buffer.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct RegisterFlags: u32 {
        /// No hint: CUDA may read and write.
        const NONE = 0;
        /// CUDA only reads; GL's contents are kept.
        const READ_ONLY = 1;
        /// CUDA overwrites everything; GL's previous contents need not be kept.
        const WRITE_DISCARD = 2;
        /// Images only: CUDA binds the image as a surface (`surf2Dwrite`).
        const SURFACE_LOAD_STORE = 4;
        /// Images only: CUDA may gather from it as a texture.
        const TEXTURE_GATHER = 8;
    }
}

/// How CUDA will use a resource during its next mappings (`CU_GRAPHICS_MAP_RESOURCE_FLAGS_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MapFlags {
    /// CUDA may read and write.
    #[default]
    None,
    /// CUDA only reads.
    ReadOnly,
    /// CUDA overwrites everything.
    WriteDiscard,
}

impl MapFlags {
    pub(crate) fn raw(self) -> u32 {
        match self {
            MapFlags::None => 0,
            MapFlags::ReadOnly => 1,
            MapFlags::WriteDiscard => 2,
        }
    }
}

/// The GL target a texture was created with. (Renderbuffers have names of their own, and
/// register with [`RegisteredImage::register_renderbuffer`](crate::RegisteredImage::register_renderbuffer).)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ImageTarget {
    /// `GL_TEXTURE_2D`.
    Texture2D,
    /// `GL_TEXTURE_RECTANGLE`.
    Rectangle,
    /// `GL_TEXTURE_2D_ARRAY`: map layers with the array index.
    Texture2DArray,
    /// `GL_TEXTURE_3D`.
    Texture3D,
    /// `GL_TEXTURE_CUBE_MAP`: map faces with the array index (0..6).
    CubeMap,
}

impl ImageTarget {
    /// The GL enum value.
    pub fn gl_enum(self) -> u32 {
        match self {
            ImageTarget::Texture2D => gl::TEXTURE_2D,
            ImageTarget::Rectangle => gl::TEXTURE_RECTANGLE,
            ImageTarget::Texture2DArray => gl::TEXTURE_2D_ARRAY,
            ImageTarget::Texture3D => gl::TEXTURE_3D,
            ImageTarget::CubeMap => gl::TEXTURE_CUBE_MAP,
        }
    }

    /// The target whose GL enum is `gl_enum`, if CUDA can register it.
    pub(crate) fn from_gl(gl_enum: u32) -> Option<ImageTarget> {
        [
            ImageTarget::Texture2D,
            ImageTarget::Rectangle,
            ImageTarget::Texture2DArray,
            ImageTarget::Texture3D,
            ImageTarget::CubeMap,
        ]
        .into_iter()
        .find(|t| t.gl_enum() == gl_enum)
    }

    pub(crate) fn describe(self) -> &'static str {
        match self {
            ImageTarget::Texture2D => "GL_TEXTURE_2D texture",
            ImageTarget::Rectangle => "GL_TEXTURE_RECTANGLE texture",
            ImageTarget::Texture2DArray => "GL_TEXTURE_2D_ARRAY texture",
            ImageTarget::Texture3D => "GL_TEXTURE_3D texture",
            ImageTarget::CubeMap => "GL_TEXTURE_CUBE_MAP texture",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Buffer,
    /// A texture, created with this target.
    Image(ImageTarget),
    Renderbuffer,
}

impl Kind {
    /// The GL namespace of the name: buffers, textures and renderbuffers are counted apart.
    pub(crate) fn namespace(self) -> u8 {
        match self {
            Kind::Buffer => 0,
            Kind::Image(_) => 1,
            Kind::Renderbuffer => 2,
        }
    }

    /// The GL enum an image registers with (`cuGraphicsGLRegisterImage`'s target); `None` for
    /// a buffer.
    pub(crate) fn image_enum(self) -> Option<u32> {
        match self {
            Kind::Buffer => None,
            Kind::Image(t) => Some(t.gl_enum()),
            Kind::Renderbuffer => Some(gl::RENDERBUFFER),
        }
    }

    pub(crate) fn describe(self) -> &'static str {
        match self {
            Kind::Buffer => "buffer",
            Kind::Image(t) => t.describe(),
            Kind::Renderbuffer => "renderbuffer",
        }
    }
}
