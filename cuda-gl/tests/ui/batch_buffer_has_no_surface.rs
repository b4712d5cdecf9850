// A batch's views are typed by what was mapped: the view of a buffer has no image accessors
// (`surface`, `array`, ...), so asking a buffer of a batch for a surface does not compile.
use cuda_gl::{RegisteredBuffer, RegisteredImage, Stream, map_all};

fn frame(
    buffer: &mut RegisteredBuffer,
    image: &mut RegisteredImage,
    stream: &Stream,
) -> cuda_gl::Result<()> {
    let batch = map_all((buffer, image), stream)?;
    let (vertices, _texels) = batch.views();
    let _surface = vertices.surface()?;
    Ok(())
}

fn main() {}
