// A surface object cannot be kept after its image is unmapped.
use cuda_gl::Surface;
use cuda_gl::{RegisteredImage, Stream};

fn leak<'a>(res: &'a mut RegisteredImage, stream: &'a Stream) -> Surface<'a> {
    let mapped = res.map(stream).unwrap();
    mapped.surface().unwrap()
}

fn main() {}
