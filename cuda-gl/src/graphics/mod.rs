//! Registering GL buffers and images with CUDA, and mapping them.
//!
//! - [`RegisteredBuffer`] and [`RegisteredImage`] own one registration each and unregister it on
//!   drop (or explicitly with `unregister()`, which returns the driver's error).
//! - `map(&mut self, &stream)` returns a guard ([`MappedBuffer`], [`MappedImage`]) that borrows
//!   the resource mutably and the stream; dropping the guard unmaps on that same stream. The
//!   borrows make these fail to compile: mapping twice, unregistering or dropping while mapped,
//!   and keeping a pointer, array or surface past the unmap.
//! - [`map_all`] maps N resources, buffers and images mixed, with one `cuGraphicsMapResources`
//!   call, and unmaps them with one call.
//!
//! Each registration also remembers whether it is mapped, so `std::mem::forget` on a guard stays
//! sound: the next `map`, `set_map_flags`, `unregister` or drop first waits for the context and
//! unmaps the leaked mapping.

mod array;
mod batch;
mod buffer;
mod claim;
mod classify;
mod copy;
mod image;
mod registration;
mod retire;
mod surface;
mod texture;

pub use array::{ArrayFormat, MappedArray, MappedMipmappedArray};
pub use batch::{MappedBatch, Resource, map_all};
pub use buffer::{MappedBuffer, RegisteredBuffer};
pub use image::{MappedImage, RegisteredImage};
pub use surface::{Surface, SurfaceObject};
#[allow(deprecated)]
pub use texture::TextureHandle;
pub use texture::{Texture, TextureDesc, TextureObject};

pub(crate) use classify::classify_gl_error;
pub(crate) use registration::{Registration, unmap_error};

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
    fn raw(self) -> u32 {
        match self {
            MapFlags::None => 0,
            MapFlags::ReadOnly => 1,
            MapFlags::WriteDiscard => 2,
        }
    }
}

/// The GL target an image was created with.
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
    /// `GL_RENDERBUFFER`.
    Renderbuffer,
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
            ImageTarget::Renderbuffer => gl::RENDERBUFFER,
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
            ImageTarget::Renderbuffer,
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
            ImageTarget::Renderbuffer => "renderbuffer",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Buffer,
    Image(ImageTarget),
}

impl Kind {
    /// The GL namespace of the name: buffers, textures and renderbuffers are counted apart.
    fn namespace(self) -> u8 {
        match self {
            Kind::Buffer => 0,
            Kind::Image(ImageTarget::Renderbuffer) => 2,
            Kind::Image(_) => 1,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Kind::Buffer => "buffer",
            Kind::Image(t) => t.describe(),
        }
    }
}
