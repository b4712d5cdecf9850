// An offscreen target's drop deletes GL objects in the context current on the dropping thread:
// it stays on the thread that made it.
use cuda_gl::egl::Offscreen;

fn hand_off(target: Offscreen) {
    std::thread::spawn(move || drop(target));
}

fn main() {}
