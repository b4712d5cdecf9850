//! Copies between a mapped texture's array and cudarc memory (`copy_from_cudarc`,
//! `copy_to_cudarc`), ordered by cudarc's events.

use super::*;

/// A cudarc slice is copied into a mapped texture, GL reads it back; the texture is copied out
/// into another cudarc slice, which cudarc reads back; the stream must be the map's, and
/// memory of another size is refused.
#[test]
fn cudarc_slices_copy_into_and_out_of_a_mapped_texture() {
    let Some(r) = rig() else { return };
    let (w, h) = (37usize, 19usize);
    let (texture, mut image) = registered_texture(&r, w, h);
    let words = pattern_words(w * h, 31);
    let src = r.stream.clone_htod(&words).unwrap();
    let mut out = r.stream.alloc_zeros::<u32>(w * h).unwrap();
    {
        let mapped = image.map(&r.stream).unwrap();
        let array = mapped.array(0, 0).unwrap();
        array.copy_from_cudarc(&src, &r.stream).unwrap();
        array.copy_to_cudarc(&mut out, &r.stream).unwrap();
        // Another stream than the map's, and memory of another size, are refused.
        let other = r.cu.new_stream().unwrap();
        let refused = array.copy_from_cudarc(&src, &other);
        assert!(
            matches!(refused, Err(Error::Usage(UsageError::NeedsCudarcStream))),
            "{refused:?}"
        );
        let short = r.stream.alloc_zeros::<u32>(w * h - 1).unwrap();
        let refused = array.copy_from_cudarc(&short, &r.stream);
        assert!(
            matches!(refused, Err(Error::CopySize { .. })),
            "{refused:?}"
        );
        mapped.unmap().unwrap();
    }
    assert_eq!(
        gpu::read_texture_rgba8(texture, w, h, 0),
        words,
        "GL read the cudarc slice copied into the texture"
    );
    assert_eq!(
        r.stream.clone_dtoh(&out).unwrap(),
        words,
        "cudarc read the texture copied out"
    );
    drop(image);
    gpu::delete_texture(texture);
}
