// llama.cpp's own Q4_0 matmul (ggml's CPU backend) on the shapes of a Llama-3.2-1B layer, beside
// bench/kernels/mlas_q4_bench.py's MatMulNBits and bench/kernels/Q40Gemv.java (journal
// 2026-12-02b). With REPACK=1 the weights go into the CPU backend's extra buffer type (CPU_REPACK:
// what llama-server does by default, Q4_0 interleaved for AVX2/AVX-512), with 0 into the plain CPU
// buffer (llama-server --no-repack). TYPE q6_k times the plain Q6_K matmul instead, the type of
// llama-quantize's tied table in a Q4_0 file (the LM head; x86 has no Q6_K repacking). One graph
// holds COPIES independent mul_mat nodes of one shape over one input of M rows (>= 256 MB of
// weights, so no run finds them in the caches); a run's time divided by COPIES is one matmul, the
// median of RUNS runs after 3 unmeasured.
//
//   cc -O2 -I SRC/ggml/include bench/kernels/ggml_matmul_bench.c -L SRC/build/bin -lggml
//      -lggml-base -lggml-cpu -Wl,-rpath,SRC/build/bin -lm -o /tmp/ggml_matmul_bench
//   /tmp/ggml_matmul_bench K N M THREADS REPACK [RUNS] [TYPE: q4_0 (default) or q6_k]
//
// SRC is the llama.cpp tree bench/llamacpp/build.sh builds (default /work/llamacpp/src).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: %s K N M THREADS REPACK [RUNS]\n", argv[0]);
    return 2;
  }
  int k = atoi(argv[1]), n = atoi(argv[2]), m = atoi(argv[3]), threads = atoi(argv[4]);
  int repack = atoi(argv[5]), runs = argc > 6 ? atoi(argv[6]) : 30;
  int q6k = argc > 7 && strcmp(argv[7], "q6_k") == 0;
  enum ggml_type type = q6k ? GGML_TYPE_Q6_K : GGML_TYPE_Q4_0;
  // a block: Q4_0 is an fp16 scale then 16 bytes of nibbles; Q6_K is 208 bytes of codes and
  // 6-bit sub-block scales, then its fp16 scale
  int block_weights = q6k ? 256 : 32, block_bytes = q6k ? 210 : 18, scale_at = q6k ? 208 : 0;
  size_t q40_bytes = (size_t)n * (k / block_weights) * block_bytes;
  int copies = (int)ceil(256e6 / q40_bytes);

  ggml_backend_t cpu = ggml_backend_cpu_init();
  ggml_backend_cpu_set_n_threads(cpu, threads);
  ggml_backend_dev_t dev = ggml_backend_get_device(cpu);
  ggml_backend_buffer_type_t weights_type = ggml_backend_cpu_buffer_type();
  if (repack) {
    ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(dev);
    ggml_backend_dev_get_extra_bufts_t extra = (ggml_backend_dev_get_extra_bufts_t)
        ggml_backend_reg_get_proc_address(reg, "ggml_backend_dev_get_extra_bufts");
    ggml_backend_buffer_type_t *types = extra ? extra(dev) : NULL;
    weights_type = NULL;
    for (int i = 0; types && types[i]; i++) {
      if (strcmp(ggml_backend_buft_name(types[i]), "CPU_REPACK") == 0) weights_type = types[i];
    }
    if (!weights_type) {
      fprintf(stderr, "no CPU_REPACK buffer type in this build\n");
      return 1;
    }
  }

  struct ggml_init_params wp = {ggml_tensor_overhead() * (copies + 1), NULL, true};
  struct ggml_context *wctx = ggml_init(wp);
  struct ggml_tensor **w = calloc(copies, sizeof *w);
  for (int c = 0; c < copies; c++) w[c] = ggml_new_tensor_2d(wctx, type, k, n);
  ggml_backend_buffer_t wbuf = ggml_backend_alloc_ctx_tensors_from_buft(wctx, weights_type);
  // random codes and scales of a plausible size, set through the backend (which repacks them)
  unsigned char *block_data = malloc(q40_bytes);
  srand(0);
  for (int c = 0; c < copies; c++) {
    for (size_t b = 0; b < q40_bytes / block_bytes; b++) {
      unsigned char *block = block_data + b * block_bytes;
      for (int j = 0; j < block_bytes; j++) block[j] = (unsigned char)rand();
      ggml_fp16_t d = ggml_fp32_to_fp16(0.001f * (0.5f + rand() / (float)RAND_MAX));
      memcpy(block + scale_at, &d, 2);
    }
    ggml_backend_tensor_set(w[c], block_data, 0, q40_bytes);
  }

  struct ggml_init_params gp = {ggml_tensor_overhead() * (2 * copies + 4) + ggml_graph_overhead_custom(4 * copies, false), NULL, true};
  struct ggml_context *gctx = ggml_init(gp);
  struct ggml_tensor *x = ggml_new_tensor_2d(gctx, GGML_TYPE_F32, k, m);
  ggml_set_input(x);
  struct ggml_cgraph *graph = ggml_new_graph_custom(gctx, 4 * copies, false);
  for (int c = 0; c < copies; c++) {
    struct ggml_tensor *y = ggml_mul_mat(gctx, w[c], x);
    ggml_set_output(y);
    ggml_build_forward_expand(graph, y);
  }
  ggml_gallocr_t alloc = ggml_gallocr_new(ggml_backend_get_default_buffer_type(cpu));
  ggml_gallocr_alloc_graph(alloc, graph);
  float *xs = malloc(sizeof(float) * k * m);
  for (int i = 0; i < k * m; i++) xs[i] = rand() / (float)RAND_MAX - 0.5f;
  ggml_backend_tensor_set(x, xs, 0, sizeof(float) * k * m);

  double *us = malloc(sizeof(double) * runs);
  for (int i = 0; i < 3; i++) ggml_backend_graph_compute(cpu, graph);
  for (int i = 0; i < runs; i++) {
    double start = now();
    ggml_backend_graph_compute(cpu, graph);
    us[i] = (now() - start) * 1e6 / copies;
  }
  qsort(us, runs, sizeof *us, cmp);
  printf("ggml %s %s K=%d N=%d M=%d threads=%d: %.1f us a matmul (%d per run), %.1f GB/s of the file's bytes\n",
         q6k ? "Q6_K" : "Q4_0", repack ? "repacked" : "plain", k, n, m, threads, us[runs / 2], copies,
         q40_bytes / (us[runs / 2] * 1e3));
  ggml_gallocr_free(alloc);
  ggml_backend_buffer_free(wbuf);
  ggml_free(gctx);
  ggml_free(wctx);
  ggml_backend_free(cpu);
  return 0;
}
