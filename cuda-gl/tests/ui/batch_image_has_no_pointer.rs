// The same the other way round: the view of an image of a batch has no device pointer.
use cuda_gl::{RegisteredBuffer, RegisteredImage, Stream, map_all};

fn frame(
    images: &mut [RegisteredImage],
    buffer: &mut RegisteredBuffer,
    stream: &Stream,
) -> cuda_gl::Result<()> {
    let batch = map_all((images, buffer), stream)?;
    let _ptr = batch.0[0].device_ptr();
    Ok(())
}

fn main() {}
