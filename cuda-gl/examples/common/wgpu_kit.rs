//! The wgpu examples' (12, 14) boilerplate: the render pass that draws a texture over a render
//! target (one full-screen triangle, a nearest sampler), the read-back of a render target's
//! pixels through a buffer (`wgpu_copy.rs`), an offscreen RGBA8 render target
//! (`wgpu_texture.rs`), and the PNG of a read-back.
//! Not part of `common/mod.rs`, which builds without the `wgpu` feature: an example that draws
//! with wgpu includes it on its own (`#[path = "common/wgpu_kit.rs"] mod wgpu_kit;`), with
//! `common/wgpu_texture.rs` beside it (`mod wgpu_texture`).
// Each example uses a different part of this module (14 paints with egui-wgpu, not `Blit`).
#![allow(dead_code)]

#[path = "wgpu_copy.rs"]
mod wgpu_copy;

use crate::common::NAME;
use crate::wgpu_texture::{cleared_to_black, texture_2d};
use anyhow::{Context as _, Result, anyhow, bail};
use std::path::Path;
use std::sync::mpsc::{self, TryRecvError};
use std::time::{Duration, Instant};

/// The longest wait for wgpu's copy into a read-back buffer and its map.
const WAIT_LIMIT: Duration = Duration::from_secs(10);

/// The render pass's shaders: one triangle that covers the render target, sampling the
/// target's texture with uv (0, 0) at the render target's top-left corner (its row 0, as
/// `copy_texture_to_buffer` reads it) and uv (1, 1) at its bottom-right one.
const SHADER: &str = r"
@group(0) @binding(0) var frame_texture: texture_2d<f32>;
@group(0) @binding(1) var frame_sampler: sampler;

struct Varyings {
    @builtin(position) position: vec4<f32>,
    @location(0) uv: vec2<f32>,
};

// Vertices 0, 1, 2 at uv (0, 0), (2, 0), (0, 2); wgpu's clip space has y up.
@vertex
fn vs_main(@builtin(vertex_index) index: u32) -> Varyings {
    let uv = vec2<f32>(f32((index << 1u) & 2u), f32(index & 2u));
    var out: Varyings;
    out.position = vec4<f32>(uv.x * 2.0 - 1.0, 1.0 - uv.y * 2.0, 0.0, 1.0);
    out.uv = uv;
    return out;
}

@fragment
fn fs_main(v: Varyings) -> @location(0) vec4<f32> {
    return textureSample(frame_texture, frame_sampler, v.uv);
}
";

/// The render pass: a full-screen triangle that samples a texture with a nearest sampler, into
/// render targets of one format.
pub struct Blit {
    pipeline: wgpu::RenderPipeline,
    sampler: wgpu::Sampler,
}

impl Blit {
    /// The pipeline for render targets of `format`.
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> Blit {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(&format!("{NAME}: full-screen triangle")),
            source: wgpu::ShaderSource::Wgsl(SHADER.into()),
        });
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some(&format!("{NAME}: sample the target's texture")),
            // The layout wgpu derives from the shader: group 0, a filterable float texture and
            // a filtering sampler.
            layout: None,
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs_main"),
                compilation_options: Default::default(),
                buffers: &[],
            },
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: None,
            multisample: wgpu::MultisampleState::default(),
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some("fs_main"),
                compilation_options: Default::default(),
                targets: &[Some(wgpu::ColorTargetState {
                    format,
                    blend: None,
                    write_mask: wgpu::ColorWrites::ALL,
                })],
            }),
            multiview_mask: None,
            cache: None,
        });
        let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some(&format!("{NAME}: nearest")),
            mag_filter: wgpu::FilterMode::Nearest,
            min_filter: wgpu::FilterMode::Nearest,
            ..Default::default()
        });
        Blit { pipeline, sampler }
    }

    /// Records the pass: `source` drawn over all of `into` (cleared first).
    pub fn encode(
        &self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        source: &wgpu::Texture,
        into: &wgpu::Texture,
    ) {
        let source_view = source.create_view(&Default::default());
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(&format!("{NAME}: the target's texture")),
            layout: &self.pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::TextureView(&source_view),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::Sampler(&self.sampler),
                },
            ],
        });
        let view = into.create_view(&Default::default());
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some(&format!("{NAME}: draw the target")),
            color_attachments: &[Some(cleared_to_black(&view))],
            depth_stencil_attachment: None,
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.draw(0..3, 0..1);
    }
}

/// A texture's pixels on their way to the host: a buffer that a recorded copy fills.
pub struct ReadBack {
    buffer: wgpu::Buffer,
    size: (u32, u32),
    /// Bytes per row in the buffer (wgpu aligns rows to 256 bytes).
    padded: u32,
    /// Whether the texels are BGRA (swapped to RGBA on the way out).
    bgra: bool,
}

impl ReadBack {
    /// Records a copy of `texture` (RGBA8 or BGRA8 UNORM, `COPY_SRC`) into a new buffer.
    pub fn copy(
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        texture: &wgpu::Texture,
    ) -> Result<ReadBack> {
        let bgra = match texture.format() {
            wgpu::TextureFormat::Rgba8Unorm => false,
            wgpu::TextureFormat::Bgra8Unorm => true,
            other => bail!("cannot compare texels of {other:?} byte for byte"),
        };
        let (width, height) = (texture.width(), texture.height());
        let label = format!("{NAME}: read-back");
        let (buffer, padded) = wgpu_copy::copy_to_buffer(device, encoder, texture, &label);
        Ok(ReadBack {
            buffer,
            size: (width, height),
            padded,
            bgra,
        })
    }

    /// The pixels, RGBA8, rows tightly packed, row 0 (the top) first, once `submitted` (the
    /// submit that holds the copy) is done: waits at most [`WAIT_LIMIT`]. Asks wgpu again
    /// while time is left: wgpu-hal 30's GL backend ends one wait after at most `i32::MAX` ns
    /// (about 2.1 s) whatever timeout it is given.
    pub fn pixels(
        self,
        device: &wgpu::Device,
        submitted: wgpu::SubmissionIndex,
    ) -> Result<Vec<u8>> {
        let (tx, rx) = mpsc::channel();
        self.buffer
            .slice(..)
            .map_async(wgpu::MapMode::Read, move |mapped| drop(tx.send(mapped)));
        let deadline = Instant::now() + WAIT_LIMIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let polled = device.poll(wgpu::PollType::Wait {
                submission_index: Some(submitted.clone()),
                timeout: Some(left),
            });
            match polled {
                Ok(_) | Err(wgpu::PollError::Timeout) => {}
                Err(e) => bail!("waiting for wgpu's copy into the read-back buffer: {e}"),
            }
            match rx.try_recv() {
                Ok(mapped) => {
                    mapped.map_err(|e| anyhow!("mapping the read-back buffer: {e}"))?;
                    break;
                }
                Err(TryRecvError::Disconnected) => {
                    bail!("wgpu dropped the read-back buffer's map request")
                }
                Err(TryRecvError::Empty) if Instant::now() >= deadline => {
                    bail!("the read-back buffer was not mapped within {WAIT_LIMIT:?}")
                }
                Err(TryRecvError::Empty) => std::thread::sleep(Duration::from_millis(1)),
            }
        }
        let (width, height) = self.size;
        let row = width as usize * 4;
        let mut pixels = Vec::with_capacity(row * height as usize);
        {
            let mapped = self
                .buffer
                .slice(..)
                .get_mapped_range()
                .map_err(|e| anyhow!("reading the mapped read-back buffer: {e}"))?;
            for line in mapped.chunks(self.padded as usize) {
                pixels.extend_from_slice(line.get(..row).context("a short read-back row")?);
            }
        }
        self.buffer.unmap();
        if self.bgra {
            for texel in pixels.chunks_exact_mut(4) {
                texel.swap(0, 2);
            }
        }
        Ok(pixels)
    }
}

/// An RGBA8 render target that is not on screen, read back after each pass.
pub struct Offscreen {
    texture: wgpu::Texture,
}

impl Offscreen {
    pub fn new(device: &wgpu::Device, (width, height): (u32, u32)) -> Offscreen {
        let texture = texture_2d(
            device,
            (width, height),
            wgpu::TextureFormat::Rgba8Unorm,
            wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
            &format!("{NAME}: offscreen render target"),
        );
        Offscreen { texture }
    }

    pub fn size(&self) -> (u32, u32) {
        (self.texture.width(), self.texture.height())
    }

    /// The texture, to render into and read back ([`ReadBack::copy`]).
    pub fn texture(&self) -> &wgpu::Texture {
        &self.texture
    }

    /// Draws `source` over all of this texture with `blit` (made for RGBA8), and reads it back
    /// once wgpu is done: the pixels, row 0 (the top) first.
    pub fn draw(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        blit: &Blit,
        source: &wgpu::Texture,
    ) -> Result<Vec<u8>> {
        let mut encoder = device.create_command_encoder(&Default::default());
        blit.encode(device, &mut encoder, source, &self.texture);
        let read = ReadBack::copy(device, &mut encoder, &self.texture)?;
        let submitted = queue.submit([encoder.finish()]);
        read.pixels(device, submitted)
    }
}

/// Writes `--screenshot`, when asked, from `pixels` (`width` x `height` RGBA8, top row first).
pub fn screenshot(path: Option<&Path>, (width, height): (u32, u32), pixels: &[u8]) -> Result<()> {
    if let Some(path) = path {
        gl_kit::image::write_png(path, width, height, pixels)?;
        println!("wrote {} ({width}x{height})", path.display());
    }
    Ok(())
}
