//! Headless OpenGL contexts through EGL, on the GPU that CUDA names (feature `egl`).
//!
//! CUDA/OpenGL interop needs the OpenGL context and the CUDA context on the *same* GPU. On a
//! server there is no X server and no window, so [`HeadlessContext::for_cuda_device`] opens a
//! display on the EGL device whose `EGL_CUDA_DEVICE_NV` attribute equals the CUDA device (never
//! by enumeration order) and makes an OpenGL 4.5 core context current on the calling thread.
//! [`HeadlessContext::any_gl`] takes any OpenGL it can find (an NVIDIA GPU first, then Mesa's
//! surfaceless platform or software device), which is what tests on CI machines without a GPU
//! use.
//!
//! libEGL is opened at run time (`libEGL.so.1`, as installed by libglvnd), so nothing links
//! against it. cuda-gl needs no GL loader; for your own GL calls, load your GL crate with
//! [`HeadlessContext::get_proc_address`] (`gl::load_with`, `glow::Context::from_loader_function`).
//!
//! The context has no default framebuffer (it is surfaceless where the driver allows): render
//! into framebuffer objects, such as an [`Offscreen`] target, which also reads the picture back.
//!
//! # Example
//!
//! A headless compute shader that squares numbers in a buffer, then reads them back:
//!
//! ```no_run
//! use cuda_gl::egl::HeadlessContext;
//! use std::ffi::CString;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // On a GPU host: HeadlessContext::for_cuda_device(&cuda_gl::Device::get(0)?)?
//! let ctx = HeadlessContext::any_gl()?;
//! gl::load_with(|name| ctx.get_proc_address(name)); // for this program's gl:: calls
//! println!("OpenGL {} on {}", ctx.version(), ctx.renderer());
//!
//! let src = CString::new(
//!     "#version 430
//!      layout(local_size_x = 64) in;
//!      layout(std430, binding = 0) buffer Data { float v[]; };
//!      void main() { uint i = gl_GlobalInvocationID.x; v[i] = v[i] * v[i]; }",
//! )?;
//! let input: Vec<f32> = (0..256).map(|i| i as f32).collect();
//! let mut output = vec![0.0f32; input.len()];
//! let bytes = (input.len() * size_of::<f32>()) as isize;
//! // SAFETY: `ctx` is current on this thread and the `gl` function pointers are loaded; every
//! // pointer handed to GL is valid for the size given.
//! unsafe {
//!     let shader = gl::CreateShader(gl::COMPUTE_SHADER);
//!     gl::ShaderSource(shader, 1, &src.as_ptr(), std::ptr::null());
//!     gl::CompileShader(shader);
//!     let program = gl::CreateProgram();
//!     gl::AttachShader(program, shader);
//!     gl::LinkProgram(program);
//!
//!     let mut buffer = 0;
//!     gl::GenBuffers(1, &mut buffer);
//!     gl::BindBuffer(gl::SHADER_STORAGE_BUFFER, buffer);
//!     gl::BufferData(gl::SHADER_STORAGE_BUFFER, bytes, input.as_ptr().cast(), gl::DYNAMIC_COPY);
//!     gl::BindBufferBase(gl::SHADER_STORAGE_BUFFER, 0, buffer);
//!
//!     gl::UseProgram(program);
//!     gl::DispatchCompute(input.len() as u32 / 64, 1, 1);
//!     gl::MemoryBarrier(gl::BUFFER_UPDATE_BARRIER_BIT);
//!     gl::GetBufferSubData(gl::SHADER_STORAGE_BUFFER, 0, bytes, output.as_mut_ptr().cast());
//!     assert_eq!(gl::GetError(), gl::NO_ERROR);
//! }
//! assert_eq!(output[3], 9.0);
//! # Ok(())
//! # }
//! ```
//!
//! # Threads
//!
//! A [`HeadlessContext`] is made current on the thread that creates it. It is `Send` but not
//! `Sync`: release it, move it, and make it current on the new thread. Threads that need OpenGL
//! at the same time create one context each; they work concurrently, sharing the EGL display.

#[cfg(test)]
mod claim_tests;
mod config;
mod create;
mod current;
mod display;
mod error;
mod headless;
mod offscreen;
#[cfg(test)]
mod owner_tests;
mod sys;
#[cfg(test)]
pub(crate) mod test_gl;

pub use config::{GlProfile, HeadlessConfig};
pub use error::{EglDeviceInfo, EglError, EglErrorCode, EglPlatform};
pub use headless::HeadlessContext;
pub use offscreen::Offscreen;

/// Lists every EGL device with what it reports (`EGL_NV_device_cuda`, CUDA id, DRM node, ...).
///
/// # Errors
///
/// [`EglError::LibraryNotFound`] if libEGL cannot be opened,
/// [`EglError::MissingClientExtensions`] if it cannot enumerate devices,
/// [`EglError::MissingEntryPoint`] or [`EglError::QueryDevices`] if enumeration fails.
pub fn list_devices() -> Result<Vec<EglDeviceInfo>, EglError> {
    let egl = sys::egl()?;
    let api = sys::DeviceApi::load(egl, &sys::client_extensions(egl))?;
    Ok(api.devices()?.into_iter().map(|d| d.info).collect())
}
