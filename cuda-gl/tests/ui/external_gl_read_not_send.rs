// A read guard's drop places a GL fence in the context current on the dropping thread: it stays
// on the thread that read.
use cuda_gl::external::ExternalRing;

fn frame(ring: &mut ExternalRing) {
    let read = ring.read(0).unwrap();
    std::thread::scope(|s| {
        s.spawn(move || drop(read));
    });
}

fn main() {}
