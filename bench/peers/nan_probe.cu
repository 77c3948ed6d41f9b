// Which NaN bits the H100 returns from f32 and native f16/bf16 arithmetic (inputs from memory,
// so nothing is folded at compile time).
#include <cstdio>
// The paired forms as rust_semantics.cu.tera uses them: operands in the low halves of 32-bit
// registers, high halves 0.
#define PAIR(dst, OP, TY, a, b) asm volatile(OP ".rn." TY "x2 %0, %1, %2;" : "=r"(dst) : "r"((unsigned)(a)), "r"((unsigned)(b)))
__global__ void probe(const unsigned* in, const unsigned short* h, unsigned* out) {
    float qn = __int_as_float(in[0]), sn = __int_as_float(in[1]), one = __int_as_float(in[2]), inf = __int_as_float(in[3]);
    out[0] = __float_as_int(qn + one);
    out[1] = __float_as_int(one + sn);
    out[2] = __float_as_int(inf - inf);
    out[3] = __float_as_int(qn * one);
    out[4] = __float_as_int(0.0f * inf);
    out[5] = __float_as_int(sn - one);
    unsigned short r;
    // f16: h[0] quiet NaN with payload, h[1] 1.0, h[2] negative signalling NaN, h[3] inf, h[4] -inf
    asm volatile("add.rn.f16 %0, %1, %2;" : "=h"(r) : "h"(h[0]), "h"(h[1])); out[6] = r;
    asm volatile("add.rn.f16 %0, %1, %2;" : "=h"(r) : "h"(h[1]), "h"(h[2])); out[7] = r;
    asm volatile("add.rn.f16 %0, %1, %2;" : "=h"(r) : "h"(h[3]), "h"(h[4])); out[8] = r;
    asm volatile("mul.rn.f16 %0, %1, %2;" : "=h"(r) : "h"(h[2]), "h"(h[1])); out[9] = r;
    asm volatile("sub.rn.f16 %0, %1, %2;" : "=h"(r) : "h"(h[3]), "h"(h[3])); out[10] = r;
    // bf16: h[5] quiet NaN with payload, h[6] 1.0, h[7] negative signalling NaN, h[8] inf, h[9] -inf
    asm volatile("add.rn.bf16 %0, %1, %2;" : "=h"(r) : "h"(h[5]), "h"(h[6])); out[11] = r;
    asm volatile("add.rn.bf16 %0, %1, %2;" : "=h"(r) : "h"(h[6]), "h"(h[7])); out[12] = r;
    asm volatile("add.rn.bf16 %0, %1, %2;" : "=h"(r) : "h"(h[8]), "h"(h[9])); out[13] = r;
    asm volatile("mul.rn.bf16 %0, %1, %2;" : "=h"(r) : "h"(h[7]), "h"(h[6])); out[14] = r;
    asm volatile("sub.rn.bf16 %0, %1, %2;" : "=h"(r) : "h"(h[8]), "h"(h[8])); out[15] = r;
    PAIR(out[16], "add", "f16", h[0], h[1]);
    PAIR(out[17], "add", "f16", h[1], h[2]);
    PAIR(out[18], "add", "f16", h[3], h[4]);
    PAIR(out[19], "mul", "f16", h[2], h[1]);
    PAIR(out[20], "sub", "f16", h[3], h[3]);
    PAIR(out[21], "add", "bf16", h[5], h[6]);
    PAIR(out[22], "add", "bf16", h[6], h[7]);
    PAIR(out[23], "add", "bf16", h[8], h[9]);
    PAIR(out[24], "mul", "bf16", h[7], h[6]);
    PAIR(out[25], "sub", "bf16", h[8], h[8]);
}
int main() {
    unsigned in[4] = {0x7fc01234u, 0xffa00001u, 0x3f800000u, 0x7f800000u};
    unsigned short h[10] = {0x7e12, 0x3c00, 0xfd01, 0x7c00, 0xfc00, 0x7fc1, 0x3f80, 0xff81, 0x7f80, 0xff80};
    unsigned *din, *dout; unsigned short* dh;
    cudaMalloc(&din, sizeof in); cudaMalloc(&dh, sizeof h); cudaMalloc(&dout, 26 * 4);
    cudaMemcpy(din, in, sizeof in, cudaMemcpyHostToDevice); cudaMemcpy(dh, h, sizeof h, cudaMemcpyHostToDevice);
    probe<<<1, 1>>>(din, dh, dout);
    unsigned out[26]; cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost);
    const char* names[26] = {"f32 qnan+1", "f32 1+snan", "f32 inf-inf", "f32 qnan*1", "f32 0*inf", "f32 snan-1",
        "f16 qnan+1", "f16 1+snan", "f16 inf-inf", "f16 snan*1", "f16 inf-inf (sub)",
        "bf16 qnan+1", "bf16 1+snan", "bf16 inf+-inf", "bf16 snan*1", "bf16 inf-inf (sub)",
        "f16x2 qnan+1", "f16x2 1+snan", "f16x2 inf-inf", "f16x2 snan*1", "f16x2 inf-inf (sub)",
        "bf16x2 qnan+1", "bf16x2 1+snan", "bf16x2 inf+-inf", "bf16x2 snan*1", "bf16x2 inf-inf (sub)"};
    for (int i = 0; i < 26; ++i) printf("%-20s 0x%08x\n", names[i], out[i]);
    return 0;
}
