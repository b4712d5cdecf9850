// A surface of a batch's image cannot be used after the batch is unmapped.
use cuda_gl::{RegisteredImage, Stream, map_all};

fn frame(images: &mut Vec<RegisteredImage>, stream: &Stream) -> cuda_gl::Result<u64> {
    let batch = map_all(images, stream)?;
    let surface = batch[0].surface()?;
    batch.unmap()?;
    Ok(surface.raw())
}

fn main() {}
