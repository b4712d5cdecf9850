//! GL object names as cuda-gl takes them: a plain `u32` (what the `gl` crate and raw bindings
//! hand out) or, with the `glow` feature, glow's `NativeBuffer`, `NativeTexture` and
//! `NativeRenderbuffer`, so that registering a glow object needs no conversion at the call.
//! Buffers, textures and renderbuffers are counted apart by GL (texture 3 and renderbuffer 3
//! are two objects), so each has a name type of its own, and glow's kind is kept: a glow
//! renderbuffer does not become a texture name, nor the reverse.

/// Defines a GL name type: a `u32` newtype from `u32`, and with the `glow` feature from glow's
/// name of the same kind and back (`TryFrom`, which refuses 0, GL's "no object").
macro_rules! gl_name {
    ($(#[$doc:meta])* $name:ident, $glow:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub struct $name(pub u32);

        impl From<u32> for $name {
            fn from(name: u32) -> Self {
                $name(name)
            }
        }

        #[cfg(feature = "glow")]
        impl From<glow::$glow> for $name {
            fn from(name: glow::$glow) -> Self {
                $name(name.0.get())
            }
        }

        #[cfg(feature = "glow")]
        impl TryFrom<$name> for glow::$glow {
            type Error = ZeroName;
            fn try_from(name: $name) -> Result<Self, ZeroName> {
                std::num::NonZeroU32::new(name.0)
                    .map(glow::$glow)
                    .ok_or(ZeroName)
            }
        }
    };
}

gl_name!(
    /// The name of a GL buffer object, as registration takes it (`impl Into<BufferName>`).
    ///
    /// From a `u32`, or with the `glow` feature from a `glow::NativeBuffer` (and back with
    /// `TryFrom`, which refuses 0, GL's "no object").
    BufferName,
    NativeBuffer
);

gl_name!(
    /// The name of a GL texture, as registration takes it (`impl Into<TextureName>`).
    ///
    /// From a `u32`, or with the `glow` feature from a `glow::NativeTexture` (and back with
    /// `TryFrom`, which refuses 0).
    TextureName,
    NativeTexture
);

gl_name!(
    /// The name of a GL renderbuffer, as registration takes it (`impl Into<RenderbufferName>`).
    ///
    /// From a `u32`, or with the `glow` feature from a `glow::NativeRenderbuffer` (and back with
    /// `TryFrom`, which refuses 0).
    RenderbufferName,
    NativeRenderbuffer
);

/// The GL name of a registered image
/// ([`RegisteredImage::gl_name`](crate::RegisteredImage::gl_name)): a texture's or a
/// renderbuffer's, which GL counts apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ImageName {
    /// A texture, registered with [`RegisteredImage::register`](crate::RegisteredImage::register)
    /// or [`register_texture`](crate::RegisteredImage::register_texture).
    Texture(TextureName),
    /// A renderbuffer, registered with
    /// [`RegisteredImage::register_renderbuffer`](crate::RegisteredImage::register_renderbuffer).
    Renderbuffer(RenderbufferName),
}

#[cfg(feature = "glow")]
mod glow_names {
    /// A name of 0 (GL's "no object") has no glow counterpart.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
    #[error("GL name 0 is not an object, so it has no glow name")]
    pub struct ZeroName;

    #[cfg(test)]
    mod tests {
        use super::*;
        use crate::gl_name::{BufferName, RenderbufferName, TextureName};
        use std::num::NonZeroU32;

        #[test]
        fn glow_names_round_trip_and_zero_is_refused() {
            let n = NonZeroU32::new(7).map(glow::NativeBuffer);
            let Some(buffer) = n else { return };
            let name = BufferName::from(buffer);
            assert_eq!(name, BufferName(7));
            assert_eq!(glow::NativeBuffer::try_from(name), Ok(buffer));
            assert_eq!(glow::NativeTexture::try_from(TextureName(0)), Err(ZeroName));
            let texture = glow::NativeTexture::try_from(TextureName(3));
            assert_eq!(texture.map(TextureName::from), Ok(TextureName(3)));
            let renderbuffer = glow::NativeRenderbuffer::try_from(RenderbufferName(4));
            assert_eq!(
                renderbuffer.map(RenderbufferName::from),
                Ok(RenderbufferName(4))
            );
        }
    }
}

#[cfg(feature = "glow")]
#[cfg_attr(docsrs, doc(cfg(feature = "glow")))]
pub use glow_names::ZeroName;
