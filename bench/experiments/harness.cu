// Experiment harness (not part of the product): times a scangen single-pass kernel variant,
// loaded from a cubin through the driver API, against cudaMemcpy of the same bytes in the same
// process, and checks its result against a CPU scan. Element: i32 (op add or max), or i64 (op
// add64).
//   harness <cubin> <add|max|add64> <log2n> <block_threads> <tile_items> <dyn_smem_bytes> [persistent_blocks_per_sm]
#include <cuda.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#define CK(x) do { CUresult r = (x); if (r != CUDA_SUCCESS) { const char* s; cuGetErrorString(r, &s); fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s); exit(1); } } while (0)
#define CR(x) do { cudaError_t r = (x); if (r != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(r)); exit(1); } } while (0)

template <typename E>
int run(int argc, char** argv) {
    const char* cubin = argv[1];
    bool is_max = strcmp(argv[2], "max") == 0;
    int log2n = atoi(argv[3]);
    unsigned threads = atoi(argv[4]);
    unsigned long long tile = atoll(argv[5]);
    unsigned dyn = atoi(argv[6]);
    int persistent = argc > 7 ? atoi(argv[7]) : 0;
    unsigned long long n = 1ull << log2n;
    CR(cudaFree(0));
    CUmodule mod; CK(cuModuleLoad(&mod, cubin));
    CUfunction f; CK(cuModuleGetFunction(&f, mod, "scangen_single_pass"));
    if (dyn > 48 * 1024) CK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, dyn));
    int regs; CK(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
    int blocks_per_sm; CK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, f, threads, dyn));
    int sms; CR(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    std::vector<E> h(n);
    unsigned long long s = 0x9e3779b97f4a7c15ull;
    for (auto& v : h) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; v = (E)((long long)(s % 2001) - 1000); if (!v) v = 7; }
    E *in, *out; void* ts;
    unsigned long long tiles = (n + tile - 1) / tile;
    // statuses (128 + up to 24 per tile), then room for the timeline variant's 64-byte records
    size_t ts_bytes = 128 + 24 * tiles + 64 * tiles;
    CR(cudaMalloc(&in, n * sizeof(E))); CR(cudaMalloc(&out, n * sizeof(E))); CR(cudaMalloc(&ts, ts_bytes));
    CR(cudaMemset(ts, 0, ts_bytes));
    CR(cudaMemcpy(in, h.data(), n * sizeof(E), cudaMemcpyHostToDevice));
    unsigned epoch = 0;
    // the deferred variants take a sixth argument: how many tiles later a tile is finished
    unsigned lag = getenv("LAG") ? (unsigned)atoi(getenv("LAG")) : 0;
    if (persistent < 0) persistent = blocks_per_sm;
    unsigned grid = persistent ? (unsigned)std::min<unsigned long long>(tiles, (unsigned long long)sms * persistent) : (unsigned)tiles;
    auto launch = [&]() {
        ++epoch;
        void* args[] = {&in, &out, &n, &ts, &epoch, &lag};
        CK(cuLaunchKernel(f, grid, 1, 1, threads, 1, 1, dyn, 0, args, nullptr));
    };
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    std::vector<float> ks, cs;
    for (int r = 0; r < 3; ++r) launch();
    CR(cudaDeviceSynchronize());
    for (int r = 0; r < 21; ++r) {
        float ms;
        cudaEventRecord(a); CR(cudaMemcpyAsync(out, in, n * sizeof(E), cudaMemcpyDeviceToDevice)); cudaEventRecord(b);
        cudaEventSynchronize(b); cudaEventElapsedTime(&ms, a, b); cs.push_back(ms);
        cudaEventRecord(a); launch(); cudaEventRecord(b);
        cudaEventSynchronize(b); cudaEventElapsedTime(&ms, a, b); ks.push_back(ms);
    }
    CR(cudaDeviceSynchronize());
    std::sort(ks.begin(), ks.end()); std::sort(cs.begin(), cs.end());
    float km = ks[ks.size() / 2], cm = cs[cs.size() / 2];
    // check the last launch's result (the copy ran before it, so `out` holds the scan)
    std::vector<E> got(n);
    CR(cudaMemcpy(got.data(), out, n * sizeof(E), cudaMemcpyDeviceToHost));
    long long bad = 0; E acc = is_max ? std::numeric_limits<E>::min() : 0;
    unsigned long long first_bad = 0;
    for (unsigned long long i = 0; i < n; ++i) {
        acc = is_max ? std::max(acc, h[i]) : (E)((unsigned long long)acc + (unsigned long long)h[i]);
        if (got[i] != acc) { if (!bad) first_bad = i; ++bad; }
    }
    if (const char* tl = getenv("TIMELINE")) {  // the last launch's records (timeline variant)
        std::vector<unsigned long long> rec(8 * tiles);
        CR(cudaMemcpy(rec.data(), (char*)ts + 128 + 8 * tiles, rec.size() * 8, cudaMemcpyDeviceToHost));  // i32 layout
        FILE* fp = fopen(tl, "wb"); fwrite(rec.data(), 8, rec.size(), fp); fclose(fp);
    }
    if (getenv("LAG")) printf("lag=%-5u ", lag);
    printf("%-28s %s log2n=%d regs=%d blocks/sm=%d grid=%u scan_ms=%.4f copy_ms=%.4f frac=%.3f %s",
           cubin, argv[2], log2n, regs, blocks_per_sm, grid, km, cm, cm / km, bad ? "WRONG" : "ok");
    if (bad) printf(" (%lld bad, first at %llu)", bad, first_bad);
    printf("\n");
    return bad ? 1 : 0;
}

int main(int argc, char** argv) {
    if (argc < 7) { fprintf(stderr, "usage\n"); return 2; }
    return strcmp(argv[2], "add64") == 0 ? run<long long>(argc, argv) : run<int>(argc, argv);
}
