// One core's peak multiply-accumulate rates: AVX-512 VNNI int8 dot products (vpdpbusd, the
// instruction ONNX Runtime's and llama.cpp's int8-compute kernels are built on) and fp32 FMAs,
// at 512 and 256 bits. Twelve independent accumulators per loop, so latency never binds, and an
// empty asm that pins them in registers, so the compiler cannot fold the loop away.
//
//   gcc -O2 -march=native -o /tmp/cpu_peak bench/llamacpp/cpu_peak.c && /tmp/cpu_peak
//
// docs/benchmarks/journal/2026-11-21-to-28.md ("How far each engine's int4 prefill is from this core's peak") quotes it.
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

#define ROUNDS 100000000L
#define PIN(T) __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5), \
    "+v"(a6), "+v"(a7), "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11))
// BENCH(name, vector type, macs per instruction, init, op on accumulator a)
#define BENCH(NAME, T, MACS, INIT, OP)                                                   \
  {                                                                                      \
    T a0 = INIT, a1 = INIT, a2 = INIT, a3 = INIT, a4 = INIT, a5 = INIT, a6 = INIT,       \
      a7 = INIT, a8 = INIT, a9 = INIT, a10 = INIT, a11 = INIT;                           \
    double t0 = now();                                                                   \
    for (long n = 0; n < ROUNDS; n++) {                                                  \
      a0 = OP(a0); a1 = OP(a1); a2 = OP(a2); a3 = OP(a3); a4 = OP(a4); a5 = OP(a5);       \
      a6 = OP(a6); a7 = OP(a7); a8 = OP(a8); a9 = OP(a9); a10 = OP(a10); a11 = OP(a11);  \
      PIN(T);                                                                            \
    }                                                                                    \
    double t = now() - t0;                                                               \
    printf("%-26s %7.1f G multiply-accumulates/s\n", NAME, 12.0 * ROUNDS * MACS / t / 1e9); \
  }

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(void) {
  __m512i x512 = _mm512_set1_epi8(1), y512 = _mm512_set1_epi8(2);
  __m256i x256 = _mm256_set1_epi8(1), y256 = _mm256_set1_epi8(2);
  __m512 u512 = _mm512_set1_ps(0.5f), w512 = _mm512_set1_ps(0.25f);
  __m256 u256 = _mm256_set1_ps(0.5f), w256 = _mm256_set1_ps(0.25f);
#define DP512(a) _mm512_dpbusd_epi32(a, x512, y512)
#define DP256(a) _mm256_dpbusd_epi32(a, x256, y256)
#define FMA512(a) _mm512_fmadd_ps(a, u512, w512)
#define FMA256(a) _mm256_fmadd_ps(a, u256, w256)
  for (int round = 0; round < 2; round++) {
    BENCH("int8 vpdpbusd, 512-bit", __m512i, 64, _mm512_setzero_si512(), DP512)
    BENCH("int8 vpdpbusd, 256-bit", __m256i, 32, _mm256_setzero_si256(), DP256)
    BENCH("fp32 vfmadd, 512-bit", __m512, 16, _mm512_setzero_ps(), FMA512)
    BENCH("fp32 vfmadd, 256-bit", __m256, 8, _mm256_setzero_ps(), FMA256)
  }
  return 0;
}
