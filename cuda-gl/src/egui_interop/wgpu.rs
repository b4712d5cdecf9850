//! [`EguiWgpuImage`]: a [`WgpuTarget`] shown as an image in an egui app painted by egui-wgpu
//! (eframe's wgpu renderer).
//!
//! egui-wgpu registers a native texture by a view of it (`Renderer::register_native_texture`)
//! and never destroys one it did not make (`free_texture` drops its bind group only), and a
//! wgpu texture lives while any view or bind group of it does: so the target's texture can be
//! given to egui as it is, with no copy and no second owner. What the adapter keeps right is
//! the registration: a resize (or a `show` of another size or format) gives the target a new
//! texture, which the registration is pointed at (`update_egui_texture_from_wgpu_texture`,
//! the same `TextureId`); an id the application freed is registered anew.

use crate::error::Result;
use crate::wgpu_interop::{WgpuTarget, scoped};
use ::egui::TextureId;
use ::egui::load::SizedTexture;

/// A [`WgpuTarget`] and its registration with an egui-wgpu renderer (see the
/// [module docs](self)): draw frames into [`target_mut`](Self::target_mut) as usual, then call
/// [`update`](Self::update) with the renderer and give egui the [`SizedTexture`] it returns
/// (`ui.image(..)`). The renderer must be of the target's wgpu device.
///
/// Row 0 of a frame is the image's top row in egui (egui's texture coordinate `v = 0` is at the
/// top). The image is sampled with `filter` ([`wgpu::FilterMode::Linear`] unless set).
#[derive(Debug)]
pub struct EguiWgpuImage {
    target: WgpuTarget,
    filter: wgpu::FilterMode,
    /// The id egui knows the image by, and the texture it was last pointed at with the
    /// current filter (`None`: to be pointed again).
    given: Option<(TextureId, Option<wgpu::Texture>)>,
}

impl EguiWgpuImage {
    /// Shows `target` in egui, sampled with linear filtering.
    pub fn new(target: WgpuTarget) -> EguiWgpuImage {
        EguiWgpuImage {
            target,
            filter: wgpu::FilterMode::Linear,
            given: None,
        }
    }

    /// The filter the image is sampled with from the next [`update`](Self::update) on
    /// (`Nearest` shows each pixel as a block when egui magnifies it).
    pub fn set_filter(&mut self, filter: wgpu::FilterMode) {
        if filter != self.filter {
            self.filter = filter;
            // Pointed again, with the new sampler, at the next update.
            if let Some((_, texture)) = &mut self.given {
                *texture = None;
            }
        }
    }

    /// The display target: its size, mode and texture.
    pub fn target(&self) -> &WgpuTarget {
        &self.target
    }

    /// The display target, to draw frames into ([`WgpuTarget::frame`], [`WgpuTarget::show`])
    /// and to resize; [`update`](Self::update) then shows the result.
    pub fn target_mut(&mut self) -> &mut WgpuTarget {
        &mut self.target
    }

    /// The egui texture id, once [`update`](Self::update) registered the image.
    pub fn texture_id(&self) -> Option<TextureId> {
        self.given.as_ref().map(|(id, _)| *id)
    }

    /// Registers the target's texture with `renderer` (the first call, or after the
    /// application freed the id), or points the registration at the target's new texture
    /// (after a resize), and returns the image and its size in pixels, for `ui.image(..)`.
    /// What the target shows after its last present is what egui draws at its next paint.
    ///
    /// # Errors
    /// [`WgpuError::Refused`](crate::wgpu_interop::WgpuError::Refused) when wgpu refuses the
    /// registration (a renderer of another device than the target's);
    /// [`WgpuError::OutOfMemory`](crate::wgpu_interop::WgpuError::OutOfMemory).
    pub fn update(&mut self, renderer: &mut egui_wgpu::Renderer) -> Result<SizedTexture> {
        let texture = self.target.texture().clone();
        let device = self.target.device().clone();
        let filter = self.filter;
        let registered = self
            .given
            .as_ref()
            .map(|(id, _)| *id)
            .filter(|id| renderer.texture(id).is_some());
        let id = match (registered, &self.given) {
            (Some(id), Some((_, Some(last)))) if *last == texture => id,
            (Some(id), _) => {
                let view = texture.create_view(&Default::default());
                scoped(
                    &device,
                    "egui_wgpu::Renderer::update_egui_texture_from_wgpu_texture",
                    || renderer.update_egui_texture_from_wgpu_texture(&device, &view, filter, id),
                )?;
                id
            }
            (None, _) => {
                let view = texture.create_view(&Default::default());
                scoped(
                    &device,
                    "egui_wgpu::Renderer::register_native_texture",
                    || renderer.register_native_texture(&device, &view, filter),
                )?
            }
        };
        let (w, h) = self.target.size();
        self.given = Some((id, Some(texture)));
        Ok(SizedTexture::new(id, [w as f32, h as f32]))
    }

    /// Frees the image's registration with `renderer` (egui then draws nothing for its id)
    /// and gives back the target.
    pub fn into_target(mut self, renderer: &mut egui_wgpu::Renderer) -> WgpuTarget {
        if let Some((id, _)) = self.given.take() {
            renderer.free_texture(&id);
        }
        self.target
    }
}
