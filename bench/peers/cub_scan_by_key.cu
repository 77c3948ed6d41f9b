// CUB's DeviceScan::InclusiveSumByKey (i32 keys, i32 values) beside a device copy of the same
// bytes (keys and values read, values written), timed with CUDA events in the same run: the peer
// of `scangen bench --variants`' "by key" row. Runs of random length 1..127 (mean 64), as there.
//   nvcc -O3 -std=c++17 -arch=sm_90 -o cub_scan_by_key cub_scan_by_key.cu && ./cub_scan_by_key 28
#include <cub/cub.cuh>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); std::exit(1); } } while (0)

int main(int argc, char** argv) {
    const int log2n = argc > 1 ? std::atoi(argv[1]) : 28;
    const size_t n = size_t(1) << log2n;
    std::vector<int> keys(n), values(n);
    unsigned long long state = 0x2545f4914f6cdd1dull;
    int key = 0;
    size_t next = 0;
    for (size_t i = 0; i < n; ++i) {
        if (i == next) {
            ++key;
            state ^= state << 13; state ^= state >> 7; state ^= state << 17;
            next = i + 1 + state % 127;
        }
        keys[i] = key;
        values[i] = int(i % 7) - 3;
    }
    int *d_keys, *d_in, *d_out;
    char *d_copy_src, *d_copy_dst;
    const size_t bytes = n * sizeof(int) * 3;  // keys + values in + values out
    CHECK(cudaMalloc(&d_keys, n * sizeof(int)));
    CHECK(cudaMalloc(&d_in, n * sizeof(int)));
    CHECK(cudaMalloc(&d_out, n * sizeof(int)));
    CHECK(cudaMalloc(&d_copy_src, bytes / 2));
    CHECK(cudaMalloc(&d_copy_dst, bytes / 2));
    CHECK(cudaMemcpy(d_keys, keys.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_in, values.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    void* temp = nullptr;
    size_t temp_bytes = 0;
    CHECK(cub::DeviceScan::InclusiveSumByKey(temp, temp_bytes, d_keys, d_in, d_out, (int)n));
    CHECK(cudaMalloc(&temp, temp_bytes));
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    std::vector<float> scan_ms, copy_ms;
    for (int rep = 0; rep < 28; ++rep) {
        float ms;
        CHECK(cudaEventRecord(a));
        CHECK(cub::DeviceScan::InclusiveSumByKey(temp, temp_bytes, d_keys, d_in, d_out, (int)n));
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        CHECK(cudaEventElapsedTime(&ms, a, b));
        if (rep >= 3) scan_ms.push_back(ms);
        CHECK(cudaEventRecord(a));
        CHECK(cudaMemcpyAsync(d_copy_dst, d_copy_src, bytes / 2, cudaMemcpyDeviceToDevice));
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        CHECK(cudaEventElapsedTime(&ms, a, b));
        if (rep >= 3) copy_ms.push_back(ms);
    }
    std::sort(scan_ms.begin(), scan_ms.end());
    std::sort(copy_ms.begin(), copy_ms.end());
    const float s = scan_ms[scan_ms.size() / 2], c = copy_ms[copy_ms.size() / 2];
    // Check the result against the host.
    std::vector<int> out(n);
    CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
    int acc = 0;
    for (size_t i = 0; i < n; ++i) {
        acc = (i == 0 || keys[i] != keys[i - 1]) ? values[i] : acc + values[i];
        if (out[i] != acc) { std::fprintf(stderr, "mismatch at %zu\n", i); return 1; }
    }
    std::printf("| CUB InclusiveSumByKey i32/i32 2^%d | %.3f ms | copy %.3f ms | %.3f of copy |\n", log2n, s, c, c / s);
    return 0;
}
