// CUB's device-wide inclusive scan over the element sizes of `scangen bench --element-sizes`
// (1 to 32 bytes: u8/u16/i32/i64 sums and the struct ops of src/cli/struct_ops.rs), each timed
// beside a device-to-device copy of the same bytes in the same run (median of 25 after 3 warm-ups).
// Build on the GPU machine:  nvcc -O3 -std=c++17 -arch=sm_90 -o cub_scan_sizes cub_scan_sizes.cu
// Run:                       ./cub_scan_sizes [log2n ...]     (default: 16 18 20 22 24 26 28 30)
// One line per case:  cub <type> <op> log2n=<k> bytes=<elem> scan_ms=<..> copy_ms=<..> frac_of_copy=<..>
#include <cub/cub.cuh>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  std::printf("CUDA error %s at line %d\n", cudaGetErrorString(e), __LINE__); std::exit(1); } } while (0)

struct Sum { template <class T> __device__ __forceinline__ T operator()(const T& a, const T& b) const { return a + b; } };
struct Affine { float a, b; };
struct AffineOp { __device__ __forceinline__ Affine operator()(const Affine& l, const Affine& r) const { return {l.a * r.a, r.a * l.b + r.b}; } };
struct Vec3 { float x, y, z; };
struct Vec3Op { __device__ __forceinline__ Vec3 operator()(const Vec3& l, const Vec3& r) const { return {l.x + r.x, l.y + r.y, l.z + r.z}; } };
struct Vec4 { float x, y, z, w; };
struct Vec4Op { __device__ __forceinline__ Vec4 operator()(const Vec4& l, const Vec4& r) const { return {l.x + r.x, l.y + r.y, l.z + r.z, l.w + r.w}; } };
struct Affine64 { double a, b; };
struct Affine64Op { __device__ __forceinline__ Affine64 operator()(const Affine64& l, const Affine64& r) const { return {l.a * r.a, r.a * l.b + r.b}; } };
struct Vec3d { double x, y, z; };
struct Vec3dOp { __device__ __forceinline__ Vec3d operator()(const Vec3d& l, const Vec3d& r) const { return {l.x + r.x, l.y + r.y, l.z + r.z}; } };
struct Mat2 { unsigned long long a, b, c, d; };
struct Mat2Op { __device__ __forceinline__ Mat2 operator()(const Mat2& l, const Mat2& r) const {
  return {l.a * r.a + l.b * r.c, l.a * r.b + l.b * r.d, l.c * r.a + l.d * r.c, l.c * r.b + l.d * r.d}; } };

// Non-zero bytes everywhere (zeros can run faster than real data).
template <class T> __global__ void fill(T* p, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned char* b = reinterpret_cast<unsigned char*>(p + i);
  for (size_t k = 0; k < sizeof(T); k++) b[k] = (unsigned char)(((i * sizeof(T) + k) * 2654435761u >> 13) % 7 + 1);
}
// Floats in [1, 2): finite under every op here.
template <class T> __global__ void fill_floats(T* p, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  constexpr size_t lanes = sizeof(T) / sizeof(float);
  float* f = reinterpret_cast<float*>(p + i);
  for (size_t k = 0; k < lanes; k++) f[k] = 1.0f + (float)(((i * lanes + k) * 2654435761u >> 13) % 1000) / 1000.0f;
}
template <class T> __global__ void fill_doubles(T* p, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  constexpr size_t lanes = sizeof(T) / sizeof(double);
  double* f = reinterpret_cast<double*>(p + i);
  for (size_t k = 0; k < lanes; k++) f[k] = 0.5 + (double)(((i * lanes + k) * 2654435761u >> 13) % 1000) / 2000.0;
}

static float median(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

enum Fill { BYTES, FLOATS, DOUBLES };

template <class T, class Op>
void bench(const char* tname, const char* oname, int lg, Op op, Fill f) {
  size_t n = (size_t)1 << lg;
  size_t free_b, total_b; CK(cudaMemGetInfo(&free_b, &total_b));
  if (2.2 * n * sizeof(T) > (double)free_b) { std::printf("cub %s %s log2n=%d skipped (memory)\n", tname, oname, lg); return; }
  T *in, *out; CK(cudaMalloc(&in, n * sizeof(T))); CK(cudaMalloc(&out, n * sizeof(T)));
  unsigned blocks = (unsigned)((n + 255) / 256);
  if (f == BYTES) fill<<<blocks, 256>>>(in, n); else if (f == FLOATS) fill_floats<<<blocks, 256>>>(in, n); else fill_doubles<<<blocks, 256>>>(in, n);
  CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  void* tmp = nullptr; size_t tmp_bytes = 0;
  CK(cub::DeviceScan::InclusiveScan(tmp, tmp_bytes, in, out, op, (int64_t)n));
  CK(cudaMalloc(&tmp, tmp_bytes));
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  std::vector<float> ts, tc;
  for (int w = 0; w < 3; w++) CK(cub::DeviceScan::InclusiveScan(tmp, tmp_bytes, in, out, op, (int64_t)n));
  for (int r = 0; r < 25; r++) {
    float ms;
    CK(cudaEventRecord(a));
    CK(cub::DeviceScan::InclusiveScan(tmp, tmp_bytes, in, out, op, (int64_t)n));
    CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
    CK(cudaEventElapsedTime(&ms, a, b)); ts.push_back(ms);
    CK(cudaEventRecord(a));
    CK(cudaMemcpyAsync(out, in, n * sizeof(T), cudaMemcpyDeviceToDevice));
    CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
    CK(cudaEventElapsedTime(&ms, a, b)); tc.push_back(ms);
  }
  float s = median(ts), c = median(tc);
  std::printf("cub %s %s log2n=%d bytes=%zu scan_ms=%.4f copy_ms=%.4f frac_of_copy=%.3f\n", tname, oname, lg, sizeof(T), s, c, c / s);
  CK(cudaEventDestroy(a)); CK(cudaEventDestroy(b));
  CK(cudaFree(in)); CK(cudaFree(out)); CK(cudaFree(tmp));
}

int main(int argc, char** argv) {
  std::vector<int> lgs;
  for (int i = 1; i < argc; i++) lgs.push_back(std::atoi(argv[i]));
  if (lgs.empty()) lgs = {16, 18, 20, 22, 24, 26, 28, 30};
  for (int lg : lgs) {
    bench<uint8_t>("u8", "add", lg, Sum(), BYTES);
    bench<uint16_t>("u16", "add", lg, Sum(), BYTES);
    bench<int32_t>("i32", "add", lg, Sum(), BYTES);
    bench<int64_t>("i64", "add", lg, Sum(), BYTES);
    bench<Affine>("f32x2", "affine", lg, AffineOp(), FLOATS);
    bench<Vec3>("f32x3", "vec3", lg, Vec3Op(), FLOATS);
    bench<Vec4>("f32x4", "vec4", lg, Vec4Op(), FLOATS);
    bench<Affine64>("f64x2", "affine64", lg, Affine64Op(), DOUBLES);
    bench<Vec3d>("f64x3", "vec3d", lg, Vec3dOp(), DOUBLES);
    bench<Mat2>("u64x4", "mat2", lg, Mat2Op(), BYTES);
  }
  return 0;
}
