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

// ---- 03_render_to_cuda ---------------------------------------------------------------------

// How many views 03 renders (the layers of its GL_TEXTURE_2D_ARRAY textures); the Rust side's
// `VIEWS` must be the same, and the launch one block of REDUCE_THREADS threads per view.
#define VIEWS 64
#define REDUCE_THREADS 256

// One texture object per layer, passed by value in one parameter: cuda-gl passes a Rust
// `[Texture; VIEWS]` as exactly this C struct.
struct ViewTextures {
    cudaTextureObject_t layer[VIEWS];
};

// Block `v` reduces view `v`: the sums over its width x height pixels of r, g, b, a (RGBA8,
// read as integers) and of the depth (R32F in 0..1) in units of 1/65535, rounded, into
// sums[5v .. 5v + 5]. Integer sums: the result does not depend on the order of the additions,
// so it equals the CPU's sums exactly.
extern "C" __global__ void view_sums(ViewTextures colour, ViewTextures depth, int width,
                                     int height, unsigned long long* sums)
{
    const unsigned view = blockIdx.x;
    if (view >= VIEWS || blockDim.x != REDUCE_THREADS) {
        return; // the whole block leaves together, before any __syncthreads
    }
    const cudaTextureObject_t c = colour.layer[view];
    const cudaTextureObject_t d = depth.layer[view];
    unsigned long long s[5] = {0, 0, 0, 0, 0};
    for (int i = threadIdx.x; i < width * height; i += REDUCE_THREADS) {
        const float x = (float)(i % width) + 0.5f, y = (float)(i / width) + 0.5f;
        const uchar4 t = tex2D<uchar4>(c, x, y);
        s[0] += t.x;
        s[1] += t.y;
        s[2] += t.z;
        s[3] += t.w;
        s[4] += (unsigned long long)(tex2D<float>(d, x, y) * 65535.0f + 0.5f);
    }
    // A tree reduction in shared memory: 256 partial sums per channel, halved each step.
    __shared__ unsigned long long partial[5][REDUCE_THREADS];
    for (int k = 0; k < 5; k++) {
        partial[k][threadIdx.x] = s[k];
    }
    __syncthreads();
    for (unsigned half = REDUCE_THREADS / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) {
            for (int k = 0; k < 5; k++) {
                partial[k][threadIdx.x] += partial[k][threadIdx.x + half];
            }
        }
        __syncthreads();
    }
    if (threadIdx.x < 5) {
        sums[view * 5 + threadIdx.x] = partial[threadIdx.x][0];
    }
}

// ---- 05_map_all ----------------------------------------------------------------------------

// A small integer in -4..=4 that changes with the vertex and the frame: 05's wobble, in steps of
// 1/64 (exact in float, so the CPU check of the VBO is exact).
__device__ int wobble(unsigned a, unsigned b, unsigned frame, unsigned ka, unsigned kb,
                      unsigned kf)
{
    return (int)((a * ka + b * kb + frame * kf) % 9u) - 4;
}

// The vertices of a full-screen grid of cells x cells squares: vertex (i, j), i and j in
// 0..=cells, at (-1 + 2i/cells, -1 + 2j/cells), the interior ones moved by wobble / 64 (less
// than half a cell for cells <= 16) so that the grid still tiles the square, written as float2
// at positions[j * (cells + 1) + i].
extern "C" __global__ void wobble_grid(float2* positions, unsigned cells, unsigned frame)
{
    const unsigned side = cells + 1;
    for (unsigned v = blockIdx.x * blockDim.x + threadIdx.x; v < side * side; v += gridDim.x * blockDim.x) {
        const unsigned i = v % side, j = v / side;
        const float step = 2.0f / (float)cells;
        float x = (float)i * step - 1.0f;
        float y = (float)j * step - 1.0f;
        if (i > 0 && i < cells) {
            x += (float)wobble(i, j, frame, 7, 13, 5) / 64.0f;
        }
        if (j > 0 && j < cells) {
            y += (float)wobble(i, j, frame, 11, 3, 7) / 64.0f;
        }
        positions[v] = make_float2(x, y);
    }
}

// The index buffer of that grid: two triangles per cell, six indices. Cell c goes to slot
// (c * 37 + frame) % (cells * cells) of the buffer (a permutation when cells * cells is a power
// of two, 37 being odd), and its diagonal alternates with the frame: the draw covers the same
// square whatever the order.
extern "C" __global__ void grid_indices(unsigned* indices, unsigned cells, unsigned frame)
{
    const unsigned count = cells * cells, side = cells + 1;
    for (unsigned c = blockIdx.x * blockDim.x + threadIdx.x; c < count; c += gridDim.x * blockDim.x) {
        const unsigned cx = c % cells, cy = c / cells;
        const unsigned a = cy * side + cx, b = a + 1, d = a + side, e = d + 1; // a b below, d e above
        unsigned* out = indices + ((c * 37u + frame) % count) * 6;
        if ((cx + cy + frame) % 2 == 0) { // diagonal a-e
            out[0] = a; out[1] = b; out[2] = e;
            out[3] = a; out[4] = e; out[5] = d;
        } else { // diagonal b-d
            out[0] = a; out[1] = b; out[2] = d;
            out[3] = b; out[4] = e; out[5] = d;
        }
    }
}

// Texel (x, y) of 05's width x height RGBA8 texture at `frame`, written through a surface:
// stripes and a checkerboard that move with the frame, alpha 255.
extern "C" __global__ void stripes_rgba8(cudaSurfaceObject_t surface, int width, int height,
                                         unsigned frame)
{
    for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < height; y += gridDim.y * blockDim.y) {
        for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < width; x += gridDim.x * blockDim.x) {
            const unsigned r = ((unsigned)x * 3u + frame) % 256u;
            const unsigned g = ((unsigned)y * 5u + frame * 2u) % 256u;
            const unsigned b = (((unsigned)x / 16u + (unsigned)y / 16u + frame) % 2u) ? 230u : 30u;
            surf2Dwrite(make_uchar4(r, g, b, 255), surface, x * 4, y);
        }
    }
}

// ---- 00_whole_cycle -----------------------------------------------------------------------

// Pixel (x, y) of 00's (the README's whole cycle) width x height RGBA8 frame `frame`, written
// into a mapped pixel buffer, row y at y * width: integers only, so the CPU check is exact.
extern "C" __global__ void gradient_rgba8(uchar4* out, int width, int height, unsigned frame)
{
    for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < height; y += gridDim.y * blockDim.y) {
        for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < width; x += gridDim.x * blockDim.x) {
            out[(size_t)y * width + x] = make_uchar4(x & 255, y & 255, frame & 255, 255);
        }
    }
}

// ---- 13_video ------------------------------------------------------------------------------

// 13's moving test pattern at pixel (x, y) of a width x height frame `frame`, as 10-bit Y', Cb,
// Cr (NV12 keeps the top 8 bits). Integers only: the example computes the same samples on the
// CPU (`pattern` in 13_video.rs; keep the two in sync). Over the top two thirds, the eight 75%
// colour bars (BT.709, limited range) scrolling left by 8 pixels a frame; below them a luma ramp
// over the limited range (64..940) that scrolls left by 12 levels a frame, no colour; across
// both, a disc of radius height / 6 that crosses the frame by 23 pixels a frame, its colour
// turning with the frame.
// The bars: white, yellow, cyan, green, magenta, red, blue, black, as 8-bit Y', Cb, Cr.
__constant__ unsigned video_bars[8][3] = {{180, 128, 128}, {168, 44, 136}, {145, 147, 44},
                                          {133, 63, 52},   {63, 193, 204}, {51, 109, 212},
                                          {28, 212, 120},  {16, 128, 128}};

__device__ void video_pattern(unsigned x, unsigned y, unsigned width, unsigned height,
                              unsigned frame, unsigned* luma, unsigned* cb, unsigned* cr)
{
    if (y < height / 3 * 2) {
        const unsigned bar = ((x + frame * 8u) % width) * 8u / width;
        *luma = video_bars[bar][0] * 4u;
        *cb = video_bars[bar][1] * 4u;
        *cr = video_bars[bar][2] * 4u;
    } else {
        *luma = 64u + (x * 876u / width + frame * 12u) % 877u;
        *cb = 512u;
        *cr = 512u;
    }
    const long long r = height / 6u > 0u ? height / 6u : 1u;
    const long long dx = (long long)x - (long long)((frame * 23u) % width);
    const long long dy = (long long)y - (long long)(height / 2u);
    if (dx * dx + dy * dy <= r * r) {
        const unsigned turn = (frame * 16u) % 512u;
        *luma = 700u;
        *cb = 256u + turn;
        *cr = 767u - turn;
    }
}

// One sample of `bits` (10) at `p`: NV12 (wide == 0) a byte, the sample's top 8 bits; P010
// (wide != 0) a little-endian 16-bit word with the sample in its top 10 bits and `junk` in the
// 6 low bits, which the format ignores (a reader must shift them out).
__device__ void video_store(unsigned char* p, int wide, unsigned sample, unsigned junk)
{
    if (wide) {
        const unsigned word = (sample << 6) | (junk & 63u);
        p[0] = (unsigned char)(word & 255u);
        p[1] = (unsigned char)(word >> 8);
    } else {
        p[0] = (unsigned char)(sample >> 2);
    }
}

// Writes frame `frame` of the pattern as a 4:2:0 frame (NV12, or P010 with `wide`) at `planes`:
// luma sample (x, y) at y * luma_pitch + x * bytes, for x < width, y < height; chroma pair
// (x / 2, y / 2), Cb then Cr, at chroma_offset + (y / 2) * chroma_pitch + (x / 2) * 2 * bytes,
// written by the thread of its top-left pixel (x, y even) with that pixel's colour: the
// ceil(width / 2) x ceil(height / 2) pairs of odd sizes included. The pitches' padding is not
// written. Byte by byte, so no address need be aligned.
extern "C" __global__ void video_test_pattern(unsigned char* planes, size_t luma_pitch,
                                              size_t chroma_offset, size_t chroma_pitch,
                                              unsigned width, unsigned height, int wide,
                                              unsigned frame)
{
    const size_t bytes = wide ? 2 : 1;
    for (unsigned y = blockIdx.y * blockDim.y + threadIdx.y; y < height; y += gridDim.y * blockDim.y) {
        for (unsigned x = blockIdx.x * blockDim.x + threadIdx.x; x < width; x += gridDim.x * blockDim.x) {
            unsigned luma, cb, cr;
            video_pattern(x, y, width, height, frame, &luma, &cb, &cr);
            const unsigned junk = x + y + frame;
            video_store(planes + y * luma_pitch + x * bytes, wide, luma, junk);
            if (x % 2u == 0u && y % 2u == 0u) {
                unsigned char* pair = planes + chroma_offset + (y / 2u) * chroma_pitch + (x / 2u) * 2u * bytes;
                video_store(pair, wide, cb, junk);
                video_store(pair + bytes, wide, cr, junk + 1u);
            }
        }
    }
}
