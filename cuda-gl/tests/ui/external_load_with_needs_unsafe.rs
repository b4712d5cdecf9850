// Loading the external-memory entry points trusts the loader's pointers: the call is unsafe.
use cuda_gl::external::ExternalGl;

fn main() {
    let _ = ExternalGl::load_with(|_| 8usize as *const std::ffi::c_void);
}
