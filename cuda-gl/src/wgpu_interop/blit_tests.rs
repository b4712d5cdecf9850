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
            .filter(|k| k.allows(format, features))
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
    assert!(!BlitKind::Compute.allows(F::R16Unorm, wgpu::Features::empty()));
}

#[test]
fn the_kinds_follow_wgpus_format_rules() {
    let sixteen = wgpu::Features::TEXTURE_FORMAT_16BIT_NORM;
    let kinds = |format, features| -> Vec<BlitKind> {
        BlitKind::ALL
            .into_iter()
            .filter(|k| k.allows(format, features))
            .collect()
    };
    use BlitKind::{Compute, Render};
    for format in [F::Rgba8Unorm, F::Rgba32Float, F::R32Float] {
        assert_eq!(kinds(format, sixteen), [Compute, Render], "{format:?}");
        assert_eq!(BlitKind::preferred(format, sixteen), Some(Compute));
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
        assert_eq!(BlitKind::preferred(format, sixteen), None, "{format:?}");
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
        let kind = BlitKind::preferred(f.wgpu(), f.required_features());
        // A compute blit but where wgpu allows no storage texture of the format.
        let want = match f {
            SharedFormat::Rgba16Float => None,
            SharedFormat::R8Unorm | SharedFormat::Rg8Unorm => Some(BlitKind::Render),
            _ => Some(BlitKind::Compute),
        };
        assert_eq!(kind, want, "{f:?}");
    }
}
