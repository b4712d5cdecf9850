//! The blit's unit tests, apart from `blit.rs` (which the benchmark and the GPU tests include
//! with `#[path]`, where naga is no dependency): every WGSL source parsed and validated by the
//! naga that wgpu 30 compiles it with, and the kinds against wgpu's format rules. No GPU.
#![allow(clippy::unwrap_used, clippy::panic)]

use super::SharedFormat;
use super::blit::{BlitKind, exact, storage_name, wgsl};
use wgpu::TextureFormat as F;

/// The formats of every `SharedFormat`.
fn formats() -> impl Iterator<Item = F> {
    SharedFormat::ALL.into_iter().map(SharedFormat::wgpu)
}

/// A size of the tests' textures, far inside wgpu's default limits.
const SIZE: (u32, u32) = (1920, 1080);

/// Whether `kind` blits `format` at [`SIZE`] on a device with `features` and wgpu's default
/// limits.
fn allows(kind: BlitKind, format: F, features: wgpu::Features) -> bool {
    kind.allows(format, features, &wgpu::Limits::default(), SIZE)
}

/// The kind a blit of `format` at [`SIZE`] uses on a device with `features` and wgpu's default
/// limits.
fn preferred(format: F, features: wgpu::Features) -> Option<BlitKind> {
    BlitKind::preferred(format, features, &wgpu::Limits::default(), SIZE)
}

/// naga's capabilities that wgpu gives a device with `features`, of those the blits need
/// (`wgpu_naga_bridge::features_to_naga_capabilities`: 16-bit normalized storage formats
/// with `TEXTURE_FORMAT_16BIT_NORM`).
fn capabilities(features: wgpu::Features) -> naga::valid::Capabilities {
    let mut caps = naga::valid::Capabilities::empty();
    caps.set(
        naga::valid::Capabilities::STORAGE_TEXTURE_16BIT_NORM_FORMATS,
        features.contains(wgpu::Features::TEXTURE_FORMAT_16BIT_NORM),
    );
    caps
}

/// The blit's WGSL parsed and validated by naga (the version wgpu 30 compiles it with).
fn validate(source: &str, features: wgpu::Features) -> Result<naga::Module, String> {
    let module = naga::front::wgsl::parse_str(source).map_err(|e| e.emit_to_string(source))?;
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), capabilities(features))
        .validate(&module)
        .map_err(|e| e.emit_to_string(source))?;
    Ok(module)
}

#[test]
fn every_blit_shader_parses_and_validates_with_naga() {
    let features = wgpu::Features::TEXTURE_FORMAT_16BIT_NORM;
    let mut checked = 0;
    for format in formats() {
        for kind in BlitKind::ALL
            .into_iter()
            .filter(|&k| allows(k, format, features))
        {
            let source = wgsl(kind, format).unwrap();
            let module = validate(&source, features)
                .unwrap_or_else(|e| panic!("{kind:?} blit into {format:?}:\n{e}"));
            let stages: Vec<_> = module.entry_points.iter().map(|e| e.stage).collect();
            let want = match kind {
                BlitKind::Compute => vec![naga::ShaderStage::Compute],
                BlitKind::Render => {
                    vec![naga::ShaderStage::Vertex, naga::ShaderStage::Fragment]
                }
            };
            assert_eq!(stages, want, "{kind:?} blit into {format:?}");
            checked += 1;
        }
    }
    // Three formats both ways, two render only, two compute only (Rgba16Float is copied).
    assert_eq!(checked, 10);
}

#[test]
fn a_16_bit_normalized_storage_blit_needs_the_feature_in_naga_as_in_wgpu() {
    let source = wgsl(BlitKind::Compute, F::R16Unorm).unwrap();
    assert!(validate(&source, wgpu::Features::empty()).is_err());
    assert!(!allows(
        BlitKind::Compute,
        F::R16Unorm,
        wgpu::Features::empty()
    ));
}

#[test]
fn the_kinds_follow_wgpus_format_rules() {
    let sixteen = wgpu::Features::TEXTURE_FORMAT_16BIT_NORM;
    let kinds = |format, features| -> Vec<BlitKind> {
        BlitKind::ALL
            .into_iter()
            .filter(|&k| allows(k, format, features))
            .collect()
    };
    use BlitKind::{Compute, Render};
    for format in [F::Rgba8Unorm, F::Rgba32Float, F::R32Float] {
        assert_eq!(kinds(format, sixteen), [Compute, Render], "{format:?}");
        assert_eq!(preferred(format, sixteen), Some(Compute));
    }
    // wgpu allows no storage of R8Unorm and Rg8Unorm, and no render attachment of the
    // 16-bit normalized formats (without adapter-specific format features).
    for format in [F::R8Unorm, F::Rg8Unorm] {
        assert_eq!(kinds(format, sixteen), [Render], "{format:?}");
    }
    for format in [F::R16Unorm, F::Rg16Unorm] {
        assert_eq!(kinds(format, sixteen), [Compute], "{format:?}");
        assert_eq!(kinds(format, wgpu::Features::empty()), [], "{format:?}");
    }
    // Texels a shader would not carry bit for bit (f16's signalling NaNs, sRGB, snorm), or
    // does not read as float: never blitted, though wgpu would allow the usages.
    for format in [
        F::Rgba16Float,
        F::Rgba8UnormSrgb,
        F::Rgba8Snorm,
        F::R32Uint,
        F::Depth32Float,
    ] {
        assert!(!exact(format), "{format:?}");
        assert_eq!(preferred(format, sixteen), None, "{format:?}");
    }
}

#[test]
fn the_compute_shader_names_its_storage_format_and_the_render_shader_none() {
    for format in formats() {
        if let Some(source) = wgsl(BlitKind::Compute, format) {
            assert!(!source.contains("STORAGE_FORMAT"), "{format:?}");
            let name = storage_name(format).unwrap();
            assert!(
                source.contains(&format!("texture_storage_2d<{name}, write>")),
                "{format:?}"
            );
        }
    }
    assert!(
        !wgsl(BlitKind::Render, F::R8Unorm)
            .unwrap()
            .contains("storage")
    );
    assert_eq!(wgsl(BlitKind::Compute, F::R8Unorm), None);
}

#[test]
fn every_shared_format_but_rgba16_float_has_a_shader_blit_on_a_device_with_its_features() {
    for f in SharedFormat::ALL {
        let kind = preferred(f.wgpu(), f.required_features());
        // A compute blit but where wgpu allows no storage texture of the format.
        let want = match f {
            SharedFormat::Rgba16Float => None,
            SharedFormat::R8Unorm | SharedFormat::Rg8Unorm => Some(BlitKind::Render),
            _ => Some(BlitKind::Compute),
        };
        assert_eq!(kind, want, "{f:?}");
    }
}

#[test]
fn a_device_with_webgl2_limits_blits_by_render_pass_or_copies() {
    // wgpu's WebGL2 limits: no storage texture, no compute workgroup.
    let limits = wgpu::Limits::downlevel_webgl2_defaults();
    assert_eq!(limits.max_storage_textures_per_shader_stage, 0);
    let sixteen = wgpu::Features::TEXTURE_FORMAT_16BIT_NORM;
    let choose = |format| BlitKind::preferred(format, sixteen, &limits, (640, 480));
    for format in [F::Rgba8Unorm, F::Rgba32Float, F::R32Float, F::R8Unorm] {
        assert_eq!(choose(format), Some(BlitKind::Render), "{format:?}");
        assert!(!BlitKind::Compute.allows(format, sixteen, &limits, (1, 1)));
    }
    // 16-bit normalized formats blit only by compute: copied.
    for format in [F::R16Unorm, F::Rg16Unorm] {
        assert_eq!(choose(format), None, "{format:?}");
    }
    // No colour attachment either: copied.
    let none = wgpu::Limits {
        max_color_attachments: 0,
        ..limits
    };
    assert_eq!(
        BlitKind::preferred(F::Rgba8Unorm, sixteen, &none, (640, 480)),
        None
    );
}

#[test]
fn a_compute_blit_is_chosen_only_where_its_workgroups_fit_the_size() {
    let limits = wgpu::Limits {
        max_compute_workgroups_per_dimension: 100,
        ..wgpu::Limits::default()
    };
    let sixteen = wgpu::Features::TEXTURE_FORMAT_16BIT_NORM;
    let choose = |size| BlitKind::preferred(F::Rgba8Unorm, sixteen, &limits, size);
    // 800 / 8 = 100 workgroups fit; 801 needs 101, on either side.
    assert_eq!(choose((800, 800)), Some(BlitKind::Compute));
    assert_eq!(choose((801, 1)), Some(BlitKind::Render));
    assert_eq!(choose((1, 801)), Some(BlitKind::Render));
    assert_eq!(
        BlitKind::preferred(F::R16Unorm, sixteen, &limits, (801, 8)),
        None
    );
    // Workgroups of 8 x 8 invocations.
    for small in [
        wgpu::Limits {
            max_compute_workgroup_size_x: 4,
            ..wgpu::Limits::default()
        },
        wgpu::Limits {
            max_compute_workgroup_size_y: 4,
            ..wgpu::Limits::default()
        },
        wgpu::Limits {
            max_compute_invocations_per_workgroup: 32,
            ..wgpu::Limits::default()
        },
    ] {
        assert!(!BlitKind::Compute.allows(F::Rgba8Unorm, sixteen, &small, (8, 8)));
        assert!(BlitKind::Render.allows(F::Rgba8Unorm, sixteen, &small, (8, 8)));
    }
}
