// The ceiling of mma.sync on this GPU, per instruction shape: every SM runs warps that issue
// only independent mma.sync on register fragments (no memory in the loop), timed with events.
// The mma family's kernels cannot run faster than this; cuBLAS's Hopper FP16/BF16/TF32 kernels
// run wgmma, which mma.sync does not reach. FP64: m8n8k4 (sm_80+) and Hopper's m16n8k4/k8/k16.
//   nvcc -arch=sm_90 -O3 -o build/mma_peak bench/mma_peak.cu && build/mma_peak
// Rows: shape and warps per SM (32, and 8 as the 256-thread, one-block-per-SM kernels of the
// family run), TFLOP/s (2 FLOPs per FMA) and FMAs per clock per SM at the GPU's maximum clock.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                   \
  do {                                                                                \
    cudaError_t e = (call);                                                           \
    if (e != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

constexpr int kIterations = 4096;

enum Shape { F16_K16, F16_K8, BF16_K16, TF32_K8, TF32_K4 };

template <Shape S>
__device__ __forceinline__ void mma(float (&c)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  if constexpr (S == F16_K16)
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  else if constexpr (S == BF16_K16)
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  else if constexpr (S == F16_K8)
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
        "{%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(b[0]));
  else if constexpr (S == TF32_K8)
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  else
    asm volatile(
        "mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
        "{%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(b[0]));
}

// FP64 m{ROWS}n8k{K}: A, B and C fragments of ROWS*K/32, K/4 and ROWS/4 doubles a lane.
template <int Rows, int K>
__device__ __forceinline__ void mma_f64(double (&c)[Rows / 4], const double (&a)[Rows * K / 32],
                                        const double (&b)[K / 4]) {
  if constexpr (Rows == 8)
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
                 : "+d"(c[0]), "+d"(c[1])
                 : "d"(a[0]), "d"(b[0]));
  else if constexpr (K == 4)
    asm volatile(
        "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
        "{%0,%1,%2,%3};"
        : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
        : "d"(a[0]), "d"(a[1]), "d"(b[0]));
  else if constexpr (K == 8)
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
  else
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "
        "{%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3};"
        : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]),
          "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
}

// Chains: independent accumulators per warp (8 at 32 warps per SM; 32 at 8 warps per SM, the
// family's 64 x 64 warp tile of m16n8 instructions).
template <Shape S, int Chains>
__global__ void mma_loop(float* out, unsigned seed) {
  unsigned a[4], b[2];
  for (int i = 0; i < 4; ++i) a[i] = seed * (threadIdx.x + 1) + i;
  for (int i = 0; i < 2; ++i) b[i] = seed ^ (threadIdx.x * 7 + i);
  float c[Chains][4] = {};
  for (int it = 0; it < kIterations; ++it)
#pragma unroll
    for (int j = 0; j < Chains; ++j) mma<S>(c[j], a, b);
  float sum = 0;
  for (int j = 0; j < Chains; ++j) sum += c[j][0] + c[j][1] + c[j][2] + c[j][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;  // keeps the chains live
}

template <int Rows, int K, int Chains>
__global__ void mma_f64_loop(float* out, unsigned seed) {
  double a[Rows * K / 32], b[K / 4];
  for (int i = 0; i < Rows * K / 32; ++i) a[i] = 1.0 + 1e-9 * (seed * (threadIdx.x + 1) + i);
  for (int i = 0; i < K / 4; ++i) b[i] = 1.0 - 1e-9 * (seed ^ (threadIdx.x * 7 + i));
  double c[Chains][Rows / 4] = {};
  for (int it = 0; it < kIterations; ++it)
#pragma unroll
    for (int j = 0; j < Chains; ++j) mma_f64<Rows, K>(c[j], a, b);
  double sum = 0;
  for (int j = 0; j < Chains; ++j)
    for (int r = 0; r < Rows / 4; ++r) sum += c[j][r];
  out[blockIdx.x * blockDim.x + threadIdx.x] = float(sum);
}

// The launches of one shape: a warm-up, then the median of 9 timed runs.
template <typename Launch>
void time_shape(const char* name, long long fmas_per_warp, int sms, int clock_khz,
                int blocks_per_sm, Launch launch) {
  const int threads = 256, blocks = sms * blocks_per_sm;
  float* out;
  CHECK(cudaMalloc(&out, sizeof(float) * threads * blocks));
  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));
  launch(blocks, threads, out, 1u);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::vector<float> ms(9);
  for (float& m : ms) {
    CHECK(cudaEventRecord(t0));
    launch(blocks, threads, out, 2u);
    CHECK(cudaEventRecord(t1));
    CHECK(cudaEventSynchronize(t1));
    CHECK(cudaEventElapsedTime(&m, t0, t1));
  }
  std::sort(ms.begin(), ms.end());
  const double fmas = double(blocks) * threads / 32 * fmas_per_warp;
  const double s = ms[ms.size() / 2] * 1e-3;
  std::printf("%-28s %2d warps/SM %8.1f TFLOP/s  %7.1f FMAs/clock/SM at %d MHz\n", name,
              blocks_per_sm * threads / 32, 2 * fmas / s * 1e-12,
              fmas / s / (clock_khz * 1e3) / sms, clock_khz / 1000);
  CHECK(cudaEventDestroy(t0));
  CHECK(cudaEventDestroy(t1));
  CHECK(cudaFree(out));
}

template <Shape S, int Chains = 8>
void run(const char* name, int fmas_per_mma, int sms, int clock_khz, int blocks_per_sm) {
  time_shape(name, (long long)kIterations * Chains * fmas_per_mma, sms, clock_khz, blocks_per_sm,
             [](int blocks, int threads, float* out, unsigned seed) {
               mma_loop<S, Chains><<<blocks, threads>>>(out, seed);
             });
}

template <int Rows, int K, int Chains>
void run_f64(const char* name, int sms, int clock_khz, int blocks_per_sm) {
  time_shape(name, (long long)kIterations * Chains * Rows * 8 * K, sms, clock_khz, blocks_per_sm,
             [](int blocks, int threads, float* out, unsigned seed) {
               mma_f64_loop<Rows, K, Chains><<<blocks, threads>>>(out, seed);
             });
}

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  int clock_khz = 0;
  CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  std::printf("%s, %d SMs\n", prop.name, prop.multiProcessorCount);
  const int sms = prop.multiProcessorCount;
#define GT_SHAPES(BLOCKS, CHAINS)                                                         \
  run<F16_K16, CHAINS>("mma m16n8k16 f16 -> f32", 16 * 8 * 16, sms, clock_khz, BLOCKS);   \
  run<F16_K8, CHAINS>("mma m16n8k8 f16 -> f32", 16 * 8 * 8, sms, clock_khz, BLOCKS);      \
  run<BF16_K16, CHAINS>("mma m16n8k16 bf16 -> f32", 16 * 8 * 16, sms, clock_khz, BLOCKS); \
  run<TF32_K8, CHAINS>("mma m16n8k8 tf32 -> f32", 16 * 8 * 8, sms, clock_khz, BLOCKS);    \
  run<TF32_K4, CHAINS>("mma m16n8k4 tf32 -> f32", 16 * 8 * 4, sms, clock_khz, BLOCKS);
  GT_SHAPES(4, 8)
  GT_SHAPES(1, 32)
  // FP64: 4 chains at 32 warps per SM, 16 at 8 (a 64 x 32 warp tile of m16n8 instructions).
#define GT_F64_SHAPES(BLOCKS, CHAINS)                                \
  run_f64<8, 4, CHAINS>("mma m8n8k4 f64", sms, clock_khz, BLOCKS);   \
  run_f64<16, 4, CHAINS>("mma m16n8k4 f64", sms, clock_khz, BLOCKS); \
  run_f64<16, 8, CHAINS>("mma m16n8k8 f64", sms, clock_khz, BLOCKS); \
  run_f64<16, 16, CHAINS>("mma m16n8k16 f64", sms, clock_khz, BLOCKS);
  GT_F64_SHAPES(4, 4)
  GT_F64_SHAPES(1, 16)
  return 0;
}
