// A ring's drop deletes GL objects in the context current on the dropping thread: it stays on
// the thread that created it.
use cuda_gl::external::ExternalRing;

fn hand_off(ring: ExternalRing) {
    std::thread::spawn(move || drop(ring));
}

fn main() {}
