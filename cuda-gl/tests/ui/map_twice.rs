// Mapping a resource while a guard of it is alive does not compile.
use cuda_gl::{RegisteredBuffer, Stream};

fn frame(res: &mut RegisteredBuffer, stream: &Stream) -> cuda_gl::Result<()> {
    let first = res.map(stream)?;
    let second = res.map(stream)?;
    drop(second);
    drop(first);
    Ok(())
}

fn main() {}
