// Kernels for the GPU tests of cuda-gl. Compiled to test_kernels.ptx (beside this file) by
// `cargo xtask ptx` with NVRTC 12.0: --gpu-architecture=compute_75 --std=c++17 --fmad=false.
// Self-contained: only NVRTC's built-in declarations are used, no CUDA toolkit headers.
//
// Every kernel is `extern "C"` (unmangled names) and uses grid-stride loops, so any grid size is
// correct: the u32 kernels expect 1D launches (x only), the surface kernels 2D ones (x, y). The
// tests' signatures depend on the parameter lists below; keep them in sync.

// The test pattern: word i of a buffer filled with `seed`. Multiplication wraps (mod 2^32).
__device__ unsigned pattern(unsigned i, unsigned seed) { return (i * 2654435761u) ^ seed; }

// out[i] = pattern(i, seed) for every i < n.
extern "C" __global__ void fill_u32(unsigned* out, unsigned n, unsigned seed)
{
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        out[i] = pattern(i, seed);
    }
}

// out[i] = in[i] for every i < n, and *mismatches is incremented (atomically) once for every i
// with in[i] != pattern(i, seed). The caller zeroes *mismatches before the launch.
extern "C" __global__ void copy_check_u32(const unsigned* in, unsigned* out, unsigned n,
                                          unsigned seed, unsigned* mismatches)
{
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        unsigned word = in[i];
        out[i] = word;
        if (word != pattern(i, seed)) {
            atomicAdd(mismatches, 1u);
        }
    }
}

// The body of surface_fill_rgba8 (and of its slow variant).
__device__ void fill_rgba8(cudaSurfaceObject_t surf, int width, int height, unsigned seed)
{
    for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < height; y += gridDim.y * blockDim.y) {
        for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < width; x += gridDim.x * blockDim.x) {
            unsigned p = pattern((unsigned)y * (unsigned)width + (unsigned)x, seed);
            uchar4 v = make_uchar4((unsigned char)(p & 0xffu), (unsigned char)((p >> 8) & 0xffu),
                                   (unsigned char)((p >> 16) & 0xffu), (unsigned char)(p >> 24));
            surf2Dwrite(v, surf, x * 4, y);
        }
    }
}

// Writes pixel (x, y) of an RGBA8 surface as the bytes of p = pattern(y * width + x, seed),
// little-endian: r = p & 0xff, g = (p >> 8) & 0xff, b = (p >> 16) & 0xff, a = p >> 24. Read back
// as one 32-bit little-endian word per pixel, the surface therefore holds exactly the pattern.
extern "C" __global__ void surface_fill_rgba8(cudaSurfaceObject_t surf, int width, int height,
                                              unsigned seed)
{
    fill_rgba8(surf, width, height, seed);
}

// The GPU's nanosecond clock (%globaltimer).
__device__ unsigned long long globaltimer_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// surface_fill_rgba8, but every thread first spins until delay_ns nanoseconds of %globaltimer
// have passed since it started: a deliberately slow writer, so that a read the stream does not
// order after it sees the old contents (the ordering tests). Launch it with a grid that fits on
// the GPU at once, so the whole kernel takes about delay_ns.
extern "C" __global__ void surface_fill_rgba8_slow(cudaSurfaceObject_t surf, int width, int height,
                                                   unsigned seed, unsigned long long delay_ns)
{
    unsigned long long start = globaltimer_ns();
    while (globaltimer_ns() - start < delay_ns) {
    }
    fill_rgba8(surf, width, height, seed);
}

// out[y * width + x] = pixel (x, y) of an RGBA8 surface packed little-endian
// (r | g << 8 | b << 16 | a << 24), the inverse of surface_fill_rgba8.
extern "C" __global__ void surface_read_rgba8(cudaSurfaceObject_t surf, int width, int height,
                                              unsigned* out)
{
    for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < height; y += gridDim.y * blockDim.y) {
        for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < width; x += gridDim.x * blockDim.x) {
            uchar4 v;
            surf2Dread(&v, surf, x * 4, y);
            out[(unsigned)y * (unsigned)width + (unsigned)x] =
                (unsigned)v.x | ((unsigned)v.y << 8) | ((unsigned)v.z << 16) | ((unsigned)v.w << 24);
        }
    }
}

// Stores through an address about 128 TiB past p, which no allocation covers, so the launch
// fails with CUDA_ERROR_ILLEGAL_ADDRESS (700) and the context becomes unusable. Launch it with a
// single thread; p may be any valid device pointer.
extern "C" __global__ void fault_illegal_address(unsigned* p)
{
    *(volatile unsigned*)((char*)p + 0x7fffffff0000ull) = 1u;
}

// *out_sum += data[0] + data[1] + ... + data[n - 1], wrapping (mod 2^32), by one atomicAdd per
// thread of its grid-stride partial sum. The caller zeroes *out_sum before the launch.
extern "C" __global__ void frame_checksum(const unsigned* data, unsigned n, unsigned* out_sum)
{
    unsigned sum = 0u;
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        sum += data[i];
    }
    if (sum != 0u) {
        atomicAdd(out_sum, sum);
    }
}

// Fills a frame whose last word checks the rest: out[i] = pattern(i, frame) for i < n - 1, and
// out[n - 1] = pattern(0, frame) + ... + pattern(n - 2, frame), wrapping (mod 2^32); n = 1 stores
// just the empty sum 0, n = 0 stores nothing.
//
// The sum needs no zeroed memory and no grid-wide synchronisation: block 0 alone computes it in a
// second block-stride pass (each of its threads sums a strided share of the n - 1 patterns, the
// shares meet in a shared-memory atomicAdd), and thread 0 of block 0 stores it with a plain
// write. Every block takes part in the first pass; any launch shape works, and the result is
// deterministic (integer addition commutes).
extern "C" __global__ void fill_frame_with_checksum(unsigned* out, unsigned n, unsigned frame)
{
    if (n == 0u) {
        return;
    }
    unsigned body = n - 1u;
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < body; i += gridDim.x * blockDim.x) {
        out[i] = pattern(i, frame);
    }
    if (blockIdx.x != 0u || blockIdx.y != 0u || blockIdx.z != 0u) {
        return;
    }
    // Block 0 only, from here on (a block-uniform branch, so __syncthreads is safe).
    __shared__ unsigned block_sum;
    unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    unsigned threads = blockDim.x * blockDim.y * blockDim.z;
    if (tid == 0u) {
        block_sum = 0u;
    }
    __syncthreads();
    unsigned sum = 0u;
    for (unsigned i = tid; i < body; i += threads) {
        sum += pattern(i, frame);
    }
    atomicAdd(&block_sum, sum);
    __syncthreads();
    if (tid == 0u) {
        out[body] = block_sum;
    }
}

// The GPU's global nanosecond timer (%globaltimer).
__device__ unsigned long long ext_globaltimer()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// out[i] = pattern(i, seed) for every i < n, as fill_u32 does, after every block has waited
// spin_ns nanoseconds (thread 0 of the block spins on %globaltimer while the others wait at a
// barrier; spin_ns = 0 skips the wait). A slow producer for the external-memory ring tests: a
// consumer that does not wait for the kernel reads the buffer before it is written. Launch it
// in one wave (for_elements(n) with n <= 256 * the blocks the GPU holds at once) so the delay is
// spin_ns once, not once per wave.
extern "C" __global__ void ext_fill_u32_slow(unsigned* out, unsigned n, unsigned seed,
                                             unsigned long long spin_ns)
{
    if (spin_ns != 0ull) {
        if (threadIdx.x == 0u) {
            unsigned long long start = ext_globaltimer();
            while (ext_globaltimer() - start < spin_ns) {
            }
        }
        __syncthreads();
    }
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        out[i] = pattern(i, seed);
    }
}

// Four surfaces passed by value as one parameter: what cuda-gl's `[Surface; 4]` (KernelParam for
// arrays) lays out, 32 bytes.
struct api_layer_surfaces4 {
    cudaSurfaceObject_t s[4];
};

// surface_fill_rgba8 of each of four layers at once: layer l gets seed + l, through layers.s[l].
extern "C" __global__ void api_fill_layers4_rgba8(api_layer_surfaces4 layers, int width, int height,
                                                  unsigned seed)
{
    for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < height; y += gridDim.y * blockDim.y) {
        for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < width; x += gridDim.x * blockDim.x) {
            for (unsigned l = 0u; l < 4u; ++l) {
                unsigned p = pattern((unsigned)y * (unsigned)width + (unsigned)x, seed + l);
                uchar4 v = make_uchar4((unsigned char)(p & 0xffu), (unsigned char)((p >> 8) & 0xffu),
                                       (unsigned char)((p >> 16) & 0xffu), (unsigned char)(p >> 24));
                surf2Dwrite(v, layers.s[l], x * 4, y);
            }
        }
    }
}

// A texel read as integers, packed little-endian as in surface_read_rgba8.
__device__ unsigned pack_texel(uchar4 v)
{
    return (unsigned)v.x | ((unsigned)v.y << 8) | ((unsigned)v.z << 16) | ((unsigned)v.w << 24);
}

// A texel read as normalized floats: each channel in 0..1 is scaled back to 0..255 and rounded.
__device__ unsigned pack_texel(float4 v)
{
    return __float2uint_rn(v.x * 255.0f) | (__float2uint_rn(v.y * 255.0f) << 8) |
           (__float2uint_rn(v.z * 255.0f) << 16) | (__float2uint_rn(v.w * 255.0f) << 24);
}

// out[y * width + x] = pack_texel of texel (x, y) of `tex` read as T, sampled at texel centres.
template <typename T>
__device__ void read_texture_packed(cudaTextureObject_t tex, int width, int height, unsigned* out)
{
    for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < height; y += gridDim.y * blockDim.y) {
        for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < width; x += gridDim.x * blockDim.x) {
            T v = tex2D<T>(tex, (float)x + 0.5f, (float)y + 0.5f);
            out[(unsigned)y * (unsigned)width + (unsigned)x] = pack_texel(v);
        }
    }
}

// out[y * width + x] = texel (x, y) of an RGBA8 texture object read as integers (cuda-gl's
// default TextureDesc), packed little-endian as in surface_read_rgba8.
extern "C" __global__ void api_texture_read_uchar4(cudaTextureObject_t tex, int width, int height,
                                                   unsigned* out)
{
    read_texture_packed<uchar4>(tex, width, height, out);
}

// As api_texture_read_uchar4, through a texture object that reads normalized floats
// (TextureDesc::normalized_float): each channel in 0..1 is scaled back to 0..255 and rounded.
// Sampled at texel centres, so linear filtering returns the texel itself.
extern "C" __global__ void api_texture_read_float4(cudaTextureObject_t tex, int width, int height,
                                                   unsigned* out)
{
    read_texture_packed<float4>(tex, width, height, out);
}
