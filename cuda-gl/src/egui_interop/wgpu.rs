//! [`EguiWgpuImage`]: a `WgpuTarget` shown in egui through egui-wgpu (see the module docs
//! above this file, `egui_interop`, for why no copy is needed).

use crate::display::{DisplayError, Format};
use crate::error::Result;
use crate::wgpu_interop::{WgpuTarget, scoped};
use ::egui::TextureId;
use ::egui::load::SizedTexture;

/// A [`WgpuTarget`] and its registration with an egui-wgpu renderer (see the
/// [module docs](super)): draw frames into [`target_mut`](Self::target_mut) as usual, then call
/// [`update`](Self::update) with the renderer and give egui the [`SizedTexture`] it returns
/// (`ui.image(..)`). The renderer must be of the target's wgpu device.
///
/// Row 0 of a frame is the image's top row in egui (egui's texture coordinate `v = 0` is at the
/// top). The image is sampled with `filter` ([`wgpu::FilterMode::Linear`] unless set). The
/// target must be RGBA8 (one-channel data through a colour map). The renderer's registration
/// keeps the texture alive until the application frees the id or drops the renderer:
/// [`into_target`](Self::into_target) frees it.
#[derive(Debug)]
pub struct EguiWgpuImage {
    target: WgpuTarget,
    filter: wgpu::FilterMode,
    /// The image's registration with a renderer, once made.
    given: Option<Given>,
}

/// A registration: the id, the texture it was last pointed at with the current filter (`None`:
/// to be pointed again), and the bind group made for it (which tells our entry from another's
/// under the same id in another renderer).
#[derive(Debug)]
struct Given {
    id: TextureId,
    texture: Option<wgpu::Texture>,
    bind_group: wgpu::BindGroup,
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
            if let Some(given) = &mut self.given {
                given.texture = None;
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
        self.given.as_ref().map(|g| g.id)
    }

    /// Registers the target's texture with `renderer` (the first call, or after the
    /// application freed the id, or with another renderer), or points the registration at the
    /// target's new texture (after a resize), and returns the image and its size in pixels,
    /// for `ui.image(..)`. What the target shows after its last present is what egui draws at
    /// its next paint.
    ///
    /// The renderer must be of the target's wgpu device, made by the same `wgpu::Instance`
    /// (wgpu panics on objects of another instance, before any error scope can see them).
    ///
    /// # Errors
    /// [`DisplayError::NotRgba8`](crate::display::DisplayError::NotRgba8) unless the target
    /// is RGBA8 (one-channel data goes through a colour map);
    /// [`WgpuError::Refused`](crate::wgpu_interop::WgpuError::Refused) when wgpu refuses the
    /// registration (a renderer of another device than the target's): the registration is
    /// freed, and egui draws nothing for the old id;
    /// [`WgpuError::OutOfMemory`](crate::wgpu_interop::WgpuError::OutOfMemory).
    pub fn update(&mut self, renderer: &mut egui_wgpu::Renderer) -> Result<SizedTexture> {
        const CALL: &str = "EguiWgpuImage::update";
        if self.target.format() != Format::Rgba8 {
            return Err(DisplayError::NotRgba8 {
                call: CALL,
                format: format!("{:?}", self.target.format()),
            }
            .into());
        }
        let texture = self.target.texture().clone();
        let device = self.target.device().clone();
        let filter = self.filter;
        // Ours only while the renderer still holds the bind group we made under that id (ids
        // restart at 0 in every renderer).
        let ours = self.given.take().filter(|g| {
            renderer
                .texture(&g.id)
                .is_some_and(|t| t.bind_group == g.bind_group)
        });
        // Made only where the registration changes, not on every frame's update.
        let view = || texture.create_view(&Default::default());
        let id = match ours {
            Some(g) if g.texture.as_ref() == Some(&texture) => g.id,
            Some(g) => {
                let repointed = scoped(
                    &device,
                    "egui_wgpu::Renderer::update_egui_texture_from_wgpu_texture",
                    || {
                        renderer.update_egui_texture_from_wgpu_texture(
                            &device,
                            &view(),
                            filter,
                            g.id,
                        )
                    },
                );
                if let Err(e) = repointed {
                    // The renderer's bind group under the id is the refused one: gone.
                    renderer.free_texture(&g.id);
                    return Err(e);
                }
                g.id
            }
            None => {
                let mut made = None;
                let registered = scoped(
                    &device,
                    "egui_wgpu::Renderer::register_native_texture",
                    || made = Some(renderer.register_native_texture(&device, &view(), filter)),
                );
                if let Err(e) = registered {
                    // Not left in the renderer's table, to grow with each retry.
                    if let Some(id) = made {
                        renderer.free_texture(&id);
                    }
                    return Err(e);
                }
                made.ok_or_else(|| crate::Error::Internal {
                    what: "egui-wgpu's registration returned no id".into(),
                })?
            }
        };
        let Some(bind_group) = renderer.texture(&id).map(|t| t.bind_group.clone()) else {
            return Err(crate::Error::Internal {
                what: "egui-wgpu lost a texture it had just registered".into(),
            });
        };
        self.given = Some(Given {
            id,
            texture: Some(texture),
            bind_group,
        });
        let (w, h) = self.target.size();
        Ok(SizedTexture::new(id, [w as f32, h as f32]))
    }

    /// Frees the image's registration with `renderer` (egui then draws nothing for its id),
    /// when that renderer holds it, and gives back the target.
    pub fn into_target(mut self, renderer: &mut egui_wgpu::Renderer) -> WgpuTarget {
        if let Some(g) = self.given.take()
            && renderer
                .texture(&g.id)
                .is_some_and(|t| t.bind_group == g.bind_group)
        {
            renderer.free_texture(&g.id);
        }
        self.target
    }
}
