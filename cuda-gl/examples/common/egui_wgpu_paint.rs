//! One egui frame painted by egui-wgpu's `Renderer` into a texture, with no window: what example
//! 14 paints headless and what the egui-wgpu GPU test (`tests/gpu_suite/egui_wgpu.rs`, which
//! includes this file by path) paints. eframe does the same into a window's surface texture.
//! Needs egui and egui-wgpu (cuda-gl's `egui-wgpu` feature), and `wgpu_texture.rs` included at
//! the crate's root (`mod wgpu_texture`).

use crate::wgpu_texture::cleared_to_black;

/// Paints `output` (what `Context::run_ui` returned) with `renderer` over all of `target` (a
/// `RENDER_ATTACHMENT` texture of the renderer's format), cleared to black first: uploads the
/// textures egui changed (its font atlas), records egui's vertex buffers and render pass, then
/// `then` in the same encoder (a copy of `target` into a read-back buffer, say), submits, and
/// frees the textures egui let go. Returns the submission.
pub fn paint(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    renderer: &mut egui_wgpu::Renderer,
    ctx: &egui::Context,
    mut output: egui::FullOutput,
    target: &wgpu::Texture,
    then: impl FnOnce(&mut wgpu::CommandEncoder),
) -> wgpu::SubmissionIndex {
    let primitives = ctx.tessellate(output.shapes, output.pixels_per_point);
    for (id, deltas) in &output.textures_delta.set {
        for delta in deltas {
            renderer.update_texture(device, queue, *id, delta);
        }
    }
    let screen = egui_wgpu::ScreenDescriptor {
        size_in_pixels: [target.width(), target.height()],
        pixels_per_point: output.pixels_per_point,
    };
    let view = target.create_view(&Default::default());
    let mut encoder = device.create_command_encoder(&Default::default());
    // Command buffers that paint callbacks recorded (none here), submitted before egui's own.
    let mut buffers = renderer.update_buffers(device, queue, &mut encoder, &primitives, &screen);
    {
        // `forget_lifetime`: egui-wgpu's `render` takes a pass that does not borrow the encoder.
        let mut pass = encoder
            .begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("egui"),
                color_attachments: &[Some(cleared_to_black(&view))],
                ..Default::default()
            })
            .forget_lifetime();
        renderer.render(&mut pass, &primitives, &screen);
    }
    then(&mut encoder);
    buffers.push(encoder.finish());
    let submitted = queue.submit(buffers);
    for id in &output.textures_delta.free {
        renderer.free_texture(id);
    }
    // Applied: emptied, as egui asks of a delta before it is dropped.
    output.textures_delta.clear();
    submitted
}
