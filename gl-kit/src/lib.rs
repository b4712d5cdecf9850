//! gl-kit: the OpenGL boilerplate of the cuda-gl workspace, written once. The plasma demo, the
//! numbered examples (`cuda-gl/examples/common`), the GPU tests (`cuda-gl/tests/gpu`) and the
//! interop benchmark use it; it is not published and is no part of cuda-gl's API.
//!
//! It holds what every OpenGL program around the interop writes, never the interop itself: the
//! CUDA side (registering, mapping, kernels) stays in the code that shows or tests it.
//!
//! - [`check`](mod@check): the pending GL errors as an error that says what was being done;
//! - [`info`]: `glGetString`, the context's version;
//! - [`entry`]: entry points resolved by name, as typed function pointers;
//! - [`plain`]: the plain-data types that GL may read and write ([`Plain`]);
//! - [`object`]: deleting GL objects, and [`Owned`], a name deleted on drop;
//! - [`buffer`]: buffer objects: create, write, copy, read back;
//! - [`texture`]: RGBA8 textures (2D, mipmapped, arrays) with immutable storage;
//! - [`upload`]: `glTexSubImage*` from host memory or a pixel buffer;
//! - [`plane`]: video plane textures' texels, written tightly packed;
//! - [`framebuffer`]: framebuffer objects over a texture or an RGBA8 renderbuffer;
//! - [`readback`]: textures and framebuffers read back, bottom row first;
//! - [`shader`]: compile and link with GL's info log in the error, integer uniforms;
//! - [`blit`]: the full-screen triangle that draws a texture over a framebuffer;
//! - [`image`]: PNG files of RGBA8 frames, and flipping rows between GL's order and a PNG's;
//! - [`watchdog`] and [`gpu_health`]: the guards of a run that waits on the GPU (std only).
//!
//! # The contract of every GL function here
//! An OpenGL context is current on the calling thread and the `gl` crate's function pointers
//! were loaded from it (`gl::load_with`); names passed in are live objects of that context (or
//! of its share group). Functions that create objects leave the bindings they used at 0. A
//! function's `// SAFETY:` comments rest on this contract.

pub mod blit;
pub mod buffer;
pub mod check;
pub mod entry;
pub mod framebuffer;
pub mod gpu_health;
pub mod image;
pub mod info;
pub mod object;
pub mod plain;
pub mod plane;
pub mod readback;
pub mod shader;
pub mod texture;
pub mod upload;
pub mod watchdog;

pub use check::check;
pub use object::{Kind, Owned};
pub use plain::Plain;
