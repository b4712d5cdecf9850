// `unregister(self)` while a mapping is alive does not compile.
use cuda_gl::{RegisteredImage, Stream};

fn frame(mut res: RegisteredImage, stream: &Stream) -> cuda_gl::Result<()> {
    let mapped = res.map(stream)?;
    res.unregister()?;
    drop(mapped);
    Ok(())
}

fn main() {}
