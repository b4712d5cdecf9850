// The kernels of the numbered examples (cuda-gl/examples/0N_*.rs). Compiled to examples.ptx
// (beside this file) by `cargo xtask ptx` with NVRTC 12.0: --gpu-architecture=compute_75
// --std=c++17 --fmad=false. Self-contained: only NVRTC's built-in declarations are used.
//
// Every kernel is `extern "C"` (unmangled, so Rust finds it by name) and uses grid-stride loops,
// so any grid covers the data. Each example's CPU check re-computes what its kernel does; keep
// the two in sync.

// ---- 01_vertex_buffer ---------------------------------------------------------------------

// simpleGL's sine wave: the vertex of grid point (x, y) of a width x height mesh at `time`, as
// (u, w, v, 1) with u, v in [-1, 1) across the mesh and w the height of the wave. The example
// computes the same floats on the CPU (no FMA contraction: --fmad=false).
extern "C" __global__ void sine_wave(float4* positions, unsigned width, unsigned height,
                                     float time)
{
    for (unsigned y = blockIdx.y * blockDim.y + threadIdx.y; y < height; y += gridDim.y * blockDim.y) {
        for (unsigned x = blockIdx.x * blockDim.x + threadIdx.x; x < width; x += gridDim.x * blockDim.x) {
            float u = (float)x / (float)width * 2.0f - 1.0f;
            float v = (float)y / (float)height * 2.0f - 1.0f;
            const float freq = 4.0f;
            float w = sinf(u * freq + time) * cosf(v * freq + time) * 0.5f;
            positions[y * width + x] = make_float4(u, w, v, 1.0f);
        }
    }
}

// ---- 02_post_process -----------------------------------------------------------------------

// The Sobel edge strength of one 8-bit channel: (|gx| + |gy|) / 2, at most 255. `p` holds the
// 3x3 neighbourhood row by row (p[0..3] the row below, p[6..9] the row above).
__device__ unsigned char sobel(const int p[9])
{
    int gx = (p[2] + 2 * p[5] + p[8]) - (p[0] + 2 * p[3] + p[6]);
    int gy = (p[6] + 2 * p[7] + p[8]) - (p[0] + 2 * p[1] + p[2]);
    int m = (abs(gx) + abs(gy)) / 2;
    return (unsigned char)(m > 255 ? 255 : m);
}

// Reads a width x height RGBA8 image through a texture object (point sampling, unnormalized
// coordinates, clamped at the borders, read as integers) and writes the Sobel edge strength of
// r, g and b into a surface of the same size, alpha 255. Integer arithmetic only, so the CPU
// check is exact.
extern "C" __global__ void sobel_rgba8(cudaTextureObject_t input, cudaSurfaceObject_t output,
                                       int width, int height)
{
    for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < height; y += gridDim.y * blockDim.y) {
        for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < width; x += gridDim.x * blockDim.x) {
            int r[9], g[9], b[9];
            for (int dy = -1; dy <= 1; dy++) {
                for (int dx = -1; dx <= 1; dx++) {
                    // Texel (i, j) covers [i, i + 1) x [j, j + 1): its centre is at +0.5. The
                    // clamp address mode repeats the edge texels outside the image.
                    uchar4 t = tex2D<uchar4>(input, x + dx + 0.5f, y + dy + 0.5f);
                    int k = (dy + 1) * 3 + (dx + 1);
                    r[k] = t.x;
                    g[k] = t.y;
                    b[k] = t.z;
                }
            }
            surf2Dwrite(make_uchar4(sobel(r), sobel(g), sobel(b), 255), output, x * 4, y);
        }
    }
}

// ---- 04_mipmap_texture ---------------------------------------------------------------------

// out[4i .. 4i + 4] = the RGBA sample of `tex` at (xy[2i], xy[2i + 1]), for i < n. The texture
// object decides how (here: linear filtering, unnormalized texel coordinates, clamped, 8-bit
// channels read as floats in [0, 1]).
extern "C" __global__ void sample_rgba(cudaTextureObject_t tex, const float* xy, float* out,
                                       unsigned n)
{
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float4 s = tex2D<float4>(tex, xy[2 * i], xy[2 * i + 1]);
        out[4 * i + 0] = s.x;
        out[4 * i + 1] = s.y;
        out[4 * i + 2] = s.z;
        out[4 * i + 3] = s.w;
    }
}
