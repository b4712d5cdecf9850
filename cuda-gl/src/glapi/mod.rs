//! cuda-gl's boundary with OpenGL: every GL call cuda-gl makes goes through here, through one
//! table of entry points that cuda-gl resolves itself from the platform the application opened
//! (EGL or GLX), never through the `gl` crate's global pointers.
//!
//! - `platform`: the EGL and GLX libraries already loaded: the current context, the resolver;
//! - `table`: the entry points ([`GlFns`]) and the small queries every caller needs;
//! - `current`: which context owns an object and which share group it is in ([`GlOwner`]), by
//!   handle and by canaries that a reused handle or another context of the group cannot fake;
//! - `label`: object labels, which tell cuda-gl's own objects from others that got their name;
//! - `claim`: the registry that refuses a GL object registered twice in one share group;
//! - `pixel_state`: the application's pixel-store and pixel-transfer state, made neutral for
//!   cuda-gl's own uploads and reads and put back after ([`PixelState`]);
//! - `fence`: GL fences; `query`: questions that check a registration.

pub(crate) mod claim;
mod current;
mod fence;
pub(crate) mod label;
mod pixel_state;
mod platform;
pub(crate) mod query;
mod table;
mod unpack;

pub(crate) use current::GlOwner;
pub(crate) use current::current_gl;
pub(crate) use fence::Fence;
pub(crate) use pixel_state::{Direction, PixelState};
#[cfg(feature = "wgpu-gl")]
pub(crate) use platform::proc_address;
pub(crate) use platform::{Current, current};
pub(crate) use table::{GlFns, have};
pub(crate) use unpack::{UnpackState, bind_checked};
