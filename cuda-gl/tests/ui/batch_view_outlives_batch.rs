// A view of a batch borrows the batch: it cannot be kept after the batch is dropped (which
// unmaps every resource of it).
use cuda_gl::{MappedImage, RegisteredBuffer, RegisteredImage, Stream, map_all};

fn leak<'a>(
    buffer: &'a mut RegisteredBuffer,
    image: &'a mut RegisteredImage,
    stream: &'a Stream,
) -> &'a MappedImage<'a> {
    let batch = map_all((buffer, image), stream).unwrap();
    &batch.1
}

fn main() {}
