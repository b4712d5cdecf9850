// Dropping (unregistering) a resource while it is mapped does not compile.
use cuda_gl::{RegisteredBuffer, Stream};

fn frame(mut res: RegisteredBuffer, stream: &Stream) -> cuda_gl::Result<usize> {
    let mapped = res.map(stream)?;
    drop(res);
    Ok(mapped.size())
}

fn main() {}
