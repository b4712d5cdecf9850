//! A compute shader that samples a `WgpuVideoPlanes`' textures as its docs say (pixel `(x, y)`:
//! luma texel `(x, y)`, chroma texel `(x, y) / 2`, P010's code the 16-bit value shifted right by
//! 6) and writes each pixel's three sample codes into a buffer; and the CPU's codes of the same
//! pixels from the frame's bytes, to compare with.

use crate::wgpu_read::mapped;
use cuda_gl::video::{VideoFormat, VideoLayout};
use cuda_gl::wgpu_interop::WgpuVideoPlanes;

/// The documented sampling, in WGSL.
const WGSL: &str = r"
struct Frame { width: u32, height: u32, wide: u32, pad: u32 }
@group(0) @binding(0) var luma: texture_2d<f32>;
@group(0) @binding(1) var chroma: texture_2d<f32>;
@group(0) @binding(2) var<uniform> frame: Frame;
@group(0) @binding(3) var<storage, read_write> codes: array<u32>;

// A sample's code from the value its texture gives: P010's high 10 bits of the 16-bit value.
fn code(v: f32) -> u32 {
    if frame.wide == 1u {
        return u32(round(v * 65535.0)) >> 6u;
    }
    return u32(round(v * 255.0));
}

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) id: vec3u) {
    if id.x >= frame.width || id.y >= frame.height {
        return;
    }
    let y = textureLoad(luma, id.xy, 0).r;
    let c = textureLoad(chroma, id.xy / 2u, 0).rg;
    let i = (id.y * frame.width + id.x) * 3u;
    codes[i] = code(y);
    codes[i + 1u] = code(c.r);
    codes[i + 2u] = code(c.g);
}
";

/// A layout entry of `binding` in the compute stage.
fn entry(binding: u32, ty: wgpu::BindingType) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty,
        count: None,
    }
}

/// A float texture that `textureLoad` reads (any float format, filterable or not).
const TEXTURE: wgpu::BindingType = wgpu::BindingType::Texture {
    sample_type: wgpu::TextureSampleType::Float { filterable: false },
    view_dimension: wgpu::TextureViewDimension::D2,
    multisampled: false,
};

/// Each pixel's (luma, Cb, Cr) codes as the shader samples them from `planes`' textures, row by
/// row.
pub fn samples(device: &wgpu::Device, queue: &wgpu::Queue, planes: &WgpuVideoPlanes) -> Vec<u32> {
    let (w, h) = planes.size();
    let wide = u32::from(planes.format() == VideoFormat::P010);
    let bytes = u64::from(w) * u64::from(h) * 3 * 4;
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("planes: sample as documented"),
        source: wgpu::ShaderSource::Wgsl(WGSL.into()),
    });
    let buffer = |size, usage| {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("planes: samples"),
            size,
            usage,
            mapped_at_creation: false,
        })
    };
    let frame = buffer(
        16,
        wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
    );
    let words: Vec<u8> = [w, h, wide, 0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    queue.write_buffer(&frame, 0, &words);
    let codes = buffer(
        bytes,
        wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
    );
    let read = buffer(
        bytes,
        wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
    );
    let storage = wgpu::BindingType::Buffer {
        ty: wgpu::BufferBindingType::Storage { read_only: false },
        has_dynamic_offset: false,
        min_binding_size: None,
    };
    let uniform = wgpu::BindingType::Buffer {
        ty: wgpu::BufferBindingType::Uniform,
        has_dynamic_offset: false,
        min_binding_size: None,
    };
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("planes: sample as documented"),
        entries: &[
            entry(0, TEXTURE),
            entry(1, TEXTURE),
            entry(2, uniform),
            entry(3, storage),
        ],
    });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("planes: sample as documented"),
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("planes: sample as documented"),
        layout: Some(&pipeline_layout),
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let (luma, chroma) = (
        planes.luma().create_view(&Default::default()),
        planes.chroma().create_view(&Default::default()),
    );
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("planes: sample as documented"),
        layout: &layout,
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: wgpu::BindingResource::TextureView(&luma),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: wgpu::BindingResource::TextureView(&chroma),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: frame.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 3,
                resource: codes.as_entire_binding(),
            },
        ],
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups(w.div_ceil(8), h.div_ceil(8), 1);
    }
    encoder.copy_buffer_to_buffer(&codes, 0, &read, 0, bytes);
    queue.submit([encoder.finish()]);
    mapped(device, &read)
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// Each pixel's (luma, Cb, Cr) codes from the frame of `layout` in `bytes`: pixel `(x, y)`
/// takes chroma pair `(x / 2, y / 2)`; P010's code is the little-endian word shifted right by 6.
pub fn samples_cpu(bytes: &[u8], layout: &VideoLayout) -> Vec<u32> {
    let bps = layout.format().bytes_per_sample();
    let code = |at: usize| match bps {
        2 => u32::from(u16::from_le_bytes([bytes[at], bytes[at + 1]]) >> 6),
        _ => u32::from(bytes[at]),
    };
    let (w, h) = (layout.width() as usize, layout.height() as usize);
    let mut out = Vec::with_capacity(w * h * 3);
    for y in 0..h {
        let chroma_row = layout.chroma_offset() + y / 2 * layout.chroma_pitch();
        for x in 0..w {
            let pair = chroma_row + x / 2 * 2 * bps;
            out.extend([
                code(y * layout.luma_pitch() + x * bps),
                code(pair),
                code(pair + bps),
            ]);
        }
    }
    out
}
