//! Display targets shown as images in egui apps: [`EguiImage`] for a GL
//! [`DisplayTarget`](crate::display::DisplayTarget) painted by egui_glow (feature `egui`,
//! eframe's glow renderer), [`EguiWgpuImage`] for a
//! [`WgpuTarget`](crate::wgpu_interop::WgpuTarget) painted by egui-wgpu (feature `egui-wgpu`,
//! eframe's wgpu renderer).
//!
//! # egui_glow (feature `egui`)
//!
//! egui_glow's painter takes ownership of every native texture registered with it: it deletes
//! them in `free_texture`, in `replace_native_texture` (the old one, at its shutdown) and at its
//! shutdown. A display target owns its texture too, and makes a new one on each resize. So the
//! target's texture is never given to egui: the adapter makes a second texture, labels it,
//! registers it with the painter, and from then on it is the painter's (the adapter never
//! deletes it). After each frame the adapter copies the target's texture into it on the GPU
//! (`glCopyImageSubData`, no read-back); on a resize it gives the same texture new storage
//! (`glTexImage2D` on the same name), so egui's registration stays valid and no stale name is
//! kept for egui to delete later. Before every write it asks for its label: a texture egui has
//! freed (or the application deleted) is left alone, and a new one is made and registered.
//! Each GL name has one owner that deletes it: the target its texture, egui the other.
//!
//! # egui-wgpu (feature `egui-wgpu`)
//!
//! egui-wgpu registers a native texture by a view of it (`Renderer::register_native_texture`)
//! and never destroys one it did not make (`free_texture` drops its bind group only), and a
//! wgpu texture lives while any view or bind group of it does: so the target's texture can be
//! given to egui as it is, with no copy and no second owner. What the adapter keeps right is
//! the registration: a resize (or a `show` of another size or format) gives the target a new
//! texture, which the registration is pointed at (`update_egui_texture_from_wgpu_texture`,
//! the same `TextureId`); an id the application freed is registered anew.

#[cfg(feature = "egui")]
mod glow;
#[cfg(feature = "egui-wgpu")]
mod wgpu;

#[cfg(feature = "egui-wgpu")]
pub use self::wgpu::EguiWgpuImage;
#[cfg(feature = "egui")]
pub use glow::EguiImage;
