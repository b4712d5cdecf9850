//! Registering GL buffers and images with CUDA, and mapping them.
//!
//! - [`RegisteredBuffer`] and [`RegisteredImage`] (`Registered<K>` of the kind [`GlBuffer`] or
//!   [`GlImage`], whose shared methods are written once in `registered`) own one registration
//!   each and unregister it on drop (or explicitly with `unregister()`, which returns the
//!   driver's error).
//! - `map(&mut self, &stream)` returns a guard ([`MappedBuffer`], [`MappedImage`]) that borrows
//!   the resource mutably and the stream; dropping the guard unmaps on that same stream. The
//!   borrows make these fail to compile: mapping twice, unregistering or dropping while mapped,
//!   and keeping a pointer, array or surface past the unmap.
//! - [`map_all`] maps N resources, buffers and images mixed, with one `cuGraphicsMapResources`
//!   call, and unmaps them with one call; its [`MappedAll`] lends the same typed views
//!   ([`MappedBuffer`], [`MappedImage`]) as single maps, by shared reference.
//!
//! Each registration also remembers whether it is mapped, so `std::mem::forget` on a guard stays
//! sound: the next `map`, `set_map_flags`, `unregister` or drop first waits for the context and
//! unmaps the leaked mapping.

mod array;
mod batch;
mod batch_set;
mod buffer;
mod classify;
mod copy;
mod image;
mod private_map;
mod registered;
mod registration;
mod retire;
mod surface;
mod surface_cache;
mod texture;
#[cfg(all(test, feature = "egl", feature = "cudarc"))]
pub(crate) mod unordered_tests;

pub use array::{ArrayFormat, MappedArray, MappedMipmappedArray};
pub use batch::{MappedAll, map_all};
pub use batch_set::{MapSet, ViewSet};
pub use buffer::{MappedBuffer, RegisteredBuffer};
pub use image::{MappedImage, RegisteredImage};
pub use registered::{BufferMapping, GlBuffer, GlImage, Mapped, Registered, ResourceKind};
pub use surface::{Surface, SurfaceObject};
pub use texture::{Tex, TexDesc, TexObject};

pub(crate) use crate::gl_object::Kind;
pub use crate::gl_object::{ImageTarget, MapFlags, RegisterFlags};
pub(crate) use private_map::on_private_stream;
pub(crate) use registration::{Claiming, Registration, unmap_error};
