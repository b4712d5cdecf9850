//! Display targets shown as images in egui apps: [`EguiImage`] for a GL
//! [`DisplayTarget`](crate::display::DisplayTarget) painted by egui_glow (feature `egui`,
//! eframe's glow renderer), [`EguiWgpuImage`] for a
//! [`WgpuTarget`](crate::wgpu_interop::WgpuTarget) painted by egui-wgpu (feature `egui-wgpu`,
//! eframe's wgpu renderer).

#[cfg(feature = "egui")]
mod glow;
#[cfg(feature = "egui-wgpu")]
mod wgpu;

#[cfg(feature = "egui-wgpu")]
pub use self::wgpu::EguiWgpuImage;
#[cfg(feature = "egui")]
pub use glow::EguiImage;
