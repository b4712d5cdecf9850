// A mapping guard that is not kept unmaps at once: `res.map(stream)?;` maps and unmaps, and the
// kernel launched after it would write unmapped memory. The guards are `#[must_use]`.
#![deny(unused_must_use)]
use cuda_gl::{RegisteredBuffer, RegisteredImage, Stream};

fn buffer(res: &mut RegisteredBuffer, stream: &Stream) -> cuda_gl::Result<()> {
    res.map(stream)?;
    Ok(())
}

fn image(res: &mut RegisteredImage, stream: &Stream) -> cuda_gl::Result<()> {
    res.map(stream)?;
    Ok(())
}

fn main() {}
