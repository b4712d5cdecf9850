//! GL object names as cuda-gl takes them: a plain `u32` (what the `gl` crate and raw bindings
//! hand out) or, with the `glow` feature, glow's `NativeBuffer`, `NativeTexture` and
//! `NativeRenderbuffer`, so that registering a glow object needs no conversion at the call.

/// The name of a GL buffer object, as registration takes it (`impl Into<BufferName>`).
///
/// From a `u32`, or with the `glow` feature from a `glow::NativeBuffer` (and back with
/// `TryFrom`, which refuses 0, GL's "no object").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BufferName(pub u32);

/// The name of a GL texture or renderbuffer, as registration takes it (`impl Into<ImageName>`).
///
/// From a `u32`, or with the `glow` feature from a `glow::NativeTexture` or
/// `glow::NativeRenderbuffer` (and back with `TryFrom`, which refuses 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ImageName(pub u32);

impl From<u32> for BufferName {
    fn from(name: u32) -> Self {
        BufferName(name)
    }
}

impl From<u32> for ImageName {
    fn from(name: u32) -> Self {
        ImageName(name)
    }
}

#[cfg(feature = "glow")]
mod glow_names {
    use super::{BufferName, ImageName};
    use std::num::NonZeroU32;

    /// A name of 0 (GL's "no object") has no glow counterpart.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
    #[error("GL name 0 is not an object, so it has no glow name")]
    pub struct ZeroName;

    impl From<glow::NativeBuffer> for BufferName {
        fn from(buffer: glow::NativeBuffer) -> Self {
            BufferName(buffer.0.get())
        }
    }

    impl From<glow::NativeTexture> for ImageName {
        fn from(texture: glow::NativeTexture) -> Self {
            ImageName(texture.0.get())
        }
    }

    impl From<glow::NativeRenderbuffer> for ImageName {
        fn from(renderbuffer: glow::NativeRenderbuffer) -> Self {
            ImageName(renderbuffer.0.get())
        }
    }

    impl TryFrom<BufferName> for glow::NativeBuffer {
        type Error = ZeroName;
        fn try_from(name: BufferName) -> Result<Self, ZeroName> {
            NonZeroU32::new(name.0)
                .map(glow::NativeBuffer)
                .ok_or(ZeroName)
        }
    }

    impl TryFrom<ImageName> for glow::NativeTexture {
        type Error = ZeroName;
        fn try_from(name: ImageName) -> Result<Self, ZeroName> {
            NonZeroU32::new(name.0)
                .map(glow::NativeTexture)
                .ok_or(ZeroName)
        }
    }

    impl TryFrom<ImageName> for glow::NativeRenderbuffer {
        type Error = ZeroName;
        fn try_from(name: ImageName) -> Result<Self, ZeroName> {
            NonZeroU32::new(name.0)
                .map(glow::NativeRenderbuffer)
                .ok_or(ZeroName)
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn glow_names_round_trip_and_zero_is_refused() {
            let n = NonZeroU32::new(7).map(glow::NativeBuffer);
            let Some(buffer) = n else { return };
            let name = BufferName::from(buffer);
            assert_eq!(name, BufferName(7));
            assert_eq!(glow::NativeBuffer::try_from(name), Ok(buffer));
            assert_eq!(glow::NativeTexture::try_from(ImageName(0)), Err(ZeroName));
            let texture = glow::NativeTexture::try_from(ImageName(3));
            assert_eq!(texture.map(ImageName::from), Ok(ImageName(3)));
        }
    }
}

#[cfg(feature = "glow")]
#[cfg_attr(docsrs, doc(cfg(feature = "glow")))]
pub use glow_names::ZeroName;
