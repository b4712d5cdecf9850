// Opening a driver library by path runs its initialisers and trusts its symbols: the call is
// unsafe.
fn main() {
    let _ = cuda_gl::sys::load_from("/tmp/not-libcuda.so");
}
