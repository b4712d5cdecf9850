//! A shader blit: every texel of one texture into another of the same size and format, by a
//! compute pass (`textureLoad`, then `textureStore` into the destination as a write-only storage
//! texture) or, for formats wgpu does not allow as storage, a render pass (a full-screen triangle
//! whose fragments `textureLoad` the texel at their own position into the destination as colour
//! attachment). No sampler, no filtering, no blending: each texel goes through the shader as
//! `vec4<f32>` and is stored in the same format, so only formats whose texels survive that bit
//! for bit are blitted ([`exact`]); the others are copied.
//!
//! Why not `copy_texture_to_texture`: on an H200 (driver 580.159.04, 2026-12-06) wgpu's copy
//! of a 1920x1080 RGBA8 texture ran at ~50 GB/s, where a shader reaches far more (see the
//! benchmark's wgpu present group, which measures both side by side).
//!
//! This file uses only `wgpu` and `std`, so that the benchmark and the GPU tests include it
//! (`#[path]`) and measure and check the very blit the present records. Errors are wgpu's
//! (reported to the caller's error scopes, or to the device's uncaptured-error handler). Its
//! unit tests are in `blit_tests.rs`.

/// How a blit writes its destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BlitKind {
    /// A compute pass writing the destination as a write-only storage texture (usage
    /// `STORAGE_BINDING`), 8 x 8 texels per workgroup.
    Compute,
    /// A render pass drawing one full-screen triangle into the destination (usage
    /// `RENDER_ATTACHMENT`).
    Render,
}

impl BlitKind {
    /// Both kinds, the preferred first: a compute pass runs on every SM, where fragment work may
    /// not (NVIDIA's H100 whitepaper: two of its TPCs run vertex and pixel shaders). The
    /// benchmark's wgpu present group measures both.
    pub(crate) const ALL: [BlitKind; 2] = [BlitKind::Compute, BlitKind::Render];

    /// The usage the destination needs for this kind.
    pub(crate) fn usage(self) -> wgpu::TextureUsages {
        match self {
            BlitKind::Compute => wgpu::TextureUsages::STORAGE_BINDING,
            BlitKind::Render => wgpu::TextureUsages::RENDER_ATTACHMENT,
        }
    }

    /// Whether this kind can blit into `format` textures of `size` on a device with `features`
    /// and `limits`: a format whose texels the shader carries bit for bit ([`exact`]), that the
    /// device can make, and that wgpu's guaranteed format features (what a WebGPU-compliant
    /// device, such as Vulkan on NVIDIA, checks textures against) allow with
    /// [`usage`](Self::usage), as a write-only storage texture for [`BlitKind::Compute`] (with a
    /// WGSL name for it here); and the device's limits allow the pass at that size (see
    /// [`fits`](Self::fits)). Size-dependent: choose again for a new size.
    pub(crate) fn allows(
        self,
        format: wgpu::TextureFormat,
        features: wgpu::Features,
        limits: &wgpu::Limits,
        size: (u32, u32),
    ) -> bool {
        if !exact(format) || !features.contains(format.required_features()) {
            return false;
        }
        let allowed = format.guaranteed_format_features(features);
        let usable = allowed.allowed_usages.contains(self.usage()) && self.fits(limits, size);
        match self {
            BlitKind::Compute => {
                usable
                    && allowed
                        .flags
                        .contains(wgpu::TextureFormatFeatureFlags::STORAGE_WRITE_ONLY)
                    && storage_name(format).is_some()
            }
            BlitKind::Render => usable,
        }
    }

    /// Whether a device with `limits` runs this kind's pass over textures of `size`: both
    /// kinds bind one sampled texture in one bind group, a render blit draws into one colour
    /// attachment, and a compute blit binds one storage texture and dispatches workgroups of
    /// 8 x 8 invocations, `size` / 8 (rounded up) of them per side. A device opened with low
    /// limits (wgpu's `downlevel_webgl2_defaults` allow no storage texture and no workgroup)
    /// would refuse the bind group layout, or the dispatch of a wide texture at the submit.
    pub(crate) fn fits(self, limits: &wgpu::Limits, (width, height): (u32, u32)) -> bool {
        let common =
            limits.max_bind_groups >= 1 && limits.max_sampled_textures_per_shader_stage >= 1;
        common
            && match self {
                BlitKind::Compute => {
                    let groups = width.div_ceil(8).max(height.div_ceil(8));
                    limits.max_storage_textures_per_shader_stage >= 1
                        && limits.max_compute_workgroup_size_x >= 8
                        && limits.max_compute_workgroup_size_y >= 8
                        && limits.max_compute_invocations_per_workgroup >= 64
                        && groups <= limits.max_compute_workgroups_per_dimension
                }
                BlitKind::Render => limits.max_color_attachments >= 1,
            }
    }

    /// The kind a blit into `format` textures of `size` uses on a device with `features` and
    /// `limits`: the first of [`ALL`](Self::ALL) that [`allows`](Self::allows) it, or `None`
    /// (copy instead).
    pub(crate) fn preferred(
        format: wgpu::TextureFormat,
        features: wgpu::Features,
        limits: &wgpu::Limits,
        size: (u32, u32),
    ) -> Option<BlitKind> {
        Self::ALL
            .into_iter()
            .find(|k| k.allows(format, features, limits, size))
    }
}

/// Whether a texel of `format` comes out of the blit as it went in, bit for bit: unsigned
/// normalized formats of 8 and 16 bits (code `k` loads as `k / (2^n - 1)` in `f32`, within far
/// less than half a step, and stores back as `k` where the conversion rounds to nearest, as
/// Vulkan says implementations should: the GPU tests check it), and 32-bit floats (loaded and
/// stored as they are, with no arithmetic between). Not 16-bit floats (`f16` to `f32` and back
/// quiets signalling NaNs: seen on lavapipe), sRGB (load and store convert), snorm (two codes of
/// -1.0) or integer formats (not read as float).
pub(crate) fn exact(format: wgpu::TextureFormat) -> bool {
    use wgpu::TextureFormat as F;
    matches!(
        format,
        F::R8Unorm
            | F::Rg8Unorm
            | F::Rgba8Unorm
            | F::R16Unorm
            | F::Rg16Unorm
            | F::Rgba16Unorm
            | F::R32Float
            | F::Rg32Float
            | F::Rgba32Float
    )
}

/// The compute blit's WGSL, with `STORAGE_FORMAT` standing for the destination's storage texel
/// format (WGSL names it in the type). Invocations past the edge (the last workgroups of a side
/// that is not a multiple of 8) store nothing.
const COMPUTE_WGSL: &str = "
@group(0) @binding(0) var source: texture_2d<f32>;
@group(0) @binding(1) var destination: texture_storage_2d<STORAGE_FORMAT, write>;

@compute @workgroup_size(8, 8)
fn blit(@builtin(global_invocation_id) id: vec3<u32>) {
    let size = textureDimensions(destination);
    if id.x >= size.x || id.y >= size.y {
        return;
    }
    textureStore(destination, id.xy, textureLoad(source, id.xy, 0));
}
";

/// The render blit's WGSL: vertices 0, 1, 2 make a triangle over the whole viewport (corners
/// (-1, -1), (3, -1), (-1, 3)); each fragment's position is its texel's centre (x + 0.5,
/// y + 0.5), which truncates to the texel's coordinates. The fragment's `vec4<f32>` goes to
/// the attachment in its format (channels it lacks are dropped).
const RENDER_WGSL: &str = "
@group(0) @binding(0) var source: texture_2d<f32>;

@vertex
fn full_screen(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    let x = f32(i32(i & 1u) * 4 - 1);
    let y = f32(i32(i >> 1u) * 4 - 1);
    return vec4<f32>(x, y, 0.0, 1.0);
}

@fragment
fn blit(@builtin(position) position: vec4<f32>) -> @location(0) vec4<f32> {
    return textureLoad(source, vec2<u32>(position.xy), 0);
}
";

/// The WGSL name of `format` as a storage texel format, for the formats a compute blit writes.
pub(crate) fn storage_name(format: wgpu::TextureFormat) -> Option<&'static str> {
    use wgpu::TextureFormat as F;
    Some(match format {
        F::Rgba8Unorm => "rgba8unorm",
        F::Rgba32Float => "rgba32float",
        F::R32Float => "r32float",
        F::R16Unorm => "r16unorm",
        F::Rg16Unorm => "rg16unorm",
        _ => return None,
    })
}

/// The WGSL of a `kind` blit into `format` (entry point `blit`), or `None` for a compute blit
/// into a format with no storage name here.
pub(crate) fn wgsl(kind: BlitKind, format: wgpu::TextureFormat) -> Option<String> {
    match kind {
        BlitKind::Compute => Some(COMPUTE_WGSL.replace("STORAGE_FORMAT", storage_name(format)?)),
        BlitKind::Render => Some(RENDER_WGSL.to_owned()),
    }
}

/// A blit's pipeline.
#[derive(Debug, Clone)]
enum Pipeline {
    Compute(wgpu::ComputePipeline),
    Render(wgpu::RenderPipeline),
}

/// A blit into textures of one format on one device: its bind group layout and pipeline, made
/// once (a target keeps it across resizes). Cheap to clone (wgpu handles).
#[derive(Debug, Clone)]
pub(crate) struct Blit {
    kind: BlitKind,
    format: wgpu::TextureFormat,
    layout: wgpu::BindGroupLayout,
    pipeline: Pipeline,
}

/// What one blit reads and writes: the bind group over a source texture (and, for a compute
/// blit, the destination), and the destination's view and size. Made once per pair of
/// textures; it holds them alive.
#[derive(Debug)]
pub(crate) struct BlitPair {
    bind_group: wgpu::BindGroup,
    destination: wgpu::TextureView,
    size: (u32, u32),
}

/// The source's binding: a 2D float texture read with `textureLoad` (unfilterable, so that
/// `Rgba32Float` and `R32Float` bind too; filterable formats bind to it as well).
fn source_entry(visibility: wgpu::ShaderStages) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding: 0,
        visibility,
        ty: wgpu::BindingType::Texture {
            sample_type: wgpu::TextureSampleType::Float { filterable: false },
            view_dimension: wgpu::TextureViewDimension::D2,
            multisampled: false,
        },
        count: None,
    }
}

impl Blit {
    /// The blit of `kind` into `format` on `device`. The caller checks
    /// [`BlitKind::allows`] first; wgpu reports what it refuses to the error scopes around
    /// this call.
    pub(crate) fn new(device: &wgpu::Device, format: wgpu::TextureFormat, kind: BlitKind) -> Blit {
        const LABEL: Option<&str> = Some("cuda_gl::wgpu_interop::blit");
        let source = wgsl(kind, format).unwrap_or_default();
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: LABEL,
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
        let mut entries = vec![source_entry(match kind {
            BlitKind::Compute => wgpu::ShaderStages::COMPUTE,
            BlitKind::Render => wgpu::ShaderStages::FRAGMENT,
        })];
        if kind == BlitKind::Compute {
            entries.push(wgpu::BindGroupLayoutEntry {
                binding: 1,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::StorageTexture {
                    access: wgpu::StorageTextureAccess::WriteOnly,
                    format,
                    view_dimension: wgpu::TextureViewDimension::D2,
                },
                count: None,
            });
        }
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: LABEL,
            entries: &entries,
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: LABEL,
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = match kind {
            BlitKind::Compute => Pipeline::Compute(device.create_compute_pipeline(
                &wgpu::ComputePipelineDescriptor {
                    label: LABEL,
                    layout: Some(&pipeline_layout),
                    module: &module,
                    entry_point: Some("blit"),
                    compilation_options: Default::default(),
                    cache: None,
                },
            )),
            BlitKind::Render => Pipeline::Render(device.create_render_pipeline(
                &wgpu::RenderPipelineDescriptor {
                    label: LABEL,
                    layout: Some(&pipeline_layout),
                    vertex: wgpu::VertexState {
                        module: &module,
                        entry_point: Some("full_screen"),
                        compilation_options: Default::default(),
                        buffers: &[],
                    },
                    primitive: wgpu::PrimitiveState::default(),
                    depth_stencil: None,
                    multisample: wgpu::MultisampleState::default(),
                    fragment: Some(wgpu::FragmentState {
                        module: &module,
                        entry_point: Some("blit"),
                        compilation_options: Default::default(),
                        targets: &[Some(wgpu::ColorTargetState {
                            format,
                            blend: None,
                            write_mask: wgpu::ColorWrites::ALL,
                        })],
                    }),
                    multiview_mask: None,
                    cache: None,
                },
            )),
        };
        Blit {
            kind,
            format,
            layout,
            pipeline,
        }
    }

    /// The kind of the blit.
    pub(crate) fn kind(&self) -> BlitKind {
        self.kind
    }

    /// The format it writes.
    pub(crate) fn format(&self) -> wgpu::TextureFormat {
        self.format
    }

    /// The pair `source` (usage `TEXTURE_BINDING`) into `destination` (usage
    /// [`BlitKind::usage`]): textures of the blit's format and the same size, one level. wgpu
    /// reports what it refuses to the caller's error scopes.
    pub(crate) fn pair(
        &self,
        device: &wgpu::Device,
        source: &wgpu::Texture,
        destination: &wgpu::Texture,
    ) -> BlitPair {
        let source_view = source.create_view(&Default::default());
        let destination_view = destination.create_view(&Default::default());
        let mut entries = vec![wgpu::BindGroupEntry {
            binding: 0,
            resource: wgpu::BindingResource::TextureView(&source_view),
        }];
        if self.kind == BlitKind::Compute {
            entries.push(wgpu::BindGroupEntry {
                binding: 1,
                resource: wgpu::BindingResource::TextureView(&destination_view),
            });
        }
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("cuda_gl::wgpu_interop::blit"),
            layout: &self.layout,
            entries: &entries,
        });
        BlitPair {
            bind_group,
            destination: destination_view,
            size: (destination.width(), destination.height()),
        }
    }

    /// Records the blit of `pair` into `encoder`: one pass that writes every texel of the
    /// destination. wgpu orders it after earlier uses of both textures and reports what it
    /// refuses in the recording at the encoder's `finish`; a texture the application destroyed
    /// by then wgpu 30 refuses only at the `Queue::submit` that carries the pass.
    pub(crate) fn encode(&self, encoder: &mut wgpu::CommandEncoder, pair: &BlitPair) {
        const LABEL: Option<&str> = Some("cuda_gl::wgpu_interop::blit");
        let (width, height) = pair.size;
        match &self.pipeline {
            Pipeline::Compute(pipeline) => {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: LABEL,
                    timestamp_writes: None,
                });
                pass.set_pipeline(pipeline);
                pass.set_bind_group(0, &pair.bind_group, &[]);
                pass.dispatch_workgroups(width.div_ceil(8), height.div_ceil(8), 1);
            }
            Pipeline::Render(pipeline) => {
                let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                    label: LABEL,
                    color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                        view: &pair.destination,
                        depth_slice: None,
                        resolve_target: None,
                        // The triangle covers every texel: nothing needs clearing first.
                        ops: wgpu::Operations {
                            load: wgpu::LoadOp::Load,
                            store: wgpu::StoreOp::Store,
                        },
                    })],
                    depth_stencil_attachment: None,
                    timestamp_writes: None,
                    occlusion_query_set: None,
                    multiview_mask: None,
                });
                pass.set_pipeline(pipeline);
                pass.set_bind_group(0, &pair.bind_group, &[]);
                pass.draw(0..3, 0..1);
            }
        }
    }

    /// A command buffer of the blit of `pair` alone (see [`encode`](Self::encode)).
    pub(crate) fn command(&self, device: &wgpu::Device, pair: &BlitPair) -> wgpu::CommandBuffer {
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("cuda_gl::wgpu_interop::blit"),
        });
        self.encode(&mut encoder, pair);
        encoder.finish()
    }
}
