// One external ring cannot hand out a CUDA write and a GL read at the same time: each guard
// borrows the ring mutably, so the CPU-side ordering of a slot cannot be bypassed by overlap.
use cuda_gl::Stream;
use cuda_gl::external::ExternalRing;

fn overlap(ring: &mut ExternalRing, stream: &Stream) -> cuda_gl::Result<()> {
    let write = ring.write(0, stream)?;
    let read = ring.read(1)?;
    write.finish()?;
    read.finish()?;
    Ok(())
}

fn main() {}
