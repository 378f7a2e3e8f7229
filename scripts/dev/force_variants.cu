// Force-kernel variants timed side by side on one device, in the manner of llm.c's dev/cuda: each
// variant checked against cuda:tuned's kernel, then timed with CUDA events (median of several
// launches after a warm-up). Built with the CUDA pipeline (target force_variants; `scripts/gpu.sh
// variants` runs it on the GPU machine). Usage: force_variants [N=262144 [TEXT]]: with TEXT, only the variants whose name
// holds it (for a profiler: every launch of the kernel is then that variant's).
//
// cuda:symmetric: K I bodies per lane x KJ travelling bodies (symmetric_kernels.cuh).
// cuda:tuned: the production kernel (one interaction after another; "min 1": __launch_bounds__(256,
// 1), as tuned.cu launches it for float, "min 0" with no minimum given, as it was launched before), one that stages a j's K
// |r|^2, then its K rsqrts together, then its K sums (MUFU ops spaced apart from the FMA work in
// the source order), and that staged form with the last of each K rsqrts taken on the FMA pipe (a
// bit-trick start and three Newton steps) instead of MUFU: does MUFU/MIO pressure hold it at ~77%?
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "dev_check.cuh"
#include "mixed_kernels.cuh"
#include "symmetric_kernels.cuh"
#include "tuned_kernels.cuh"

using namespace nbody::cuda;

// 1/sqrt(x) on the FMA pipe: the classic integer start (3.4% error), three Newton steps.
__device__ __forceinline__ float rsqrt_newton(float x) {
  float y = __int_as_float(0x5f375a86 - (__float_as_int(x) >> 1));
  const float h = 0.5f * x;
#pragma unroll
  for (int i = 0; i < 3; ++i) y = y * fmaf(-h, y * y, 1.5f);
  return y;
}

template <int K, int kMode>  // 0: staged; 1: staged, the last rsqrt by Newton
__global__ void __launch_bounds__(256) tuned_variant(const Vec4T<float>* __restrict__ pos, Vec4T<float>* __restrict__ acc,
                                                     int npad, float eps2) {
  extern __shared__ __align__(16) unsigned char smem[];
  Vec4T<float>* tile = reinterpret_cast<Vec4T<float>*>(smem);
  const int B = blockDim.x, t = threadIdx.x, first = blockIdx.x * B * K + t;
  float x[K], y[K], z[K], ax[K], ay[K], az[K];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const Vec4T<float> p = pos[first + k * B];
    x[k] = p.x, y[k] = p.y, z[k] = p.z, ax[k] = ay[k] = az[k] = 0;
  }
  for (int tt = 0; tt < npad / B; ++tt) {
    __syncthreads();
    tile[t] = pos[tt * B + t];
    __syncthreads();
#pragma unroll 8
    for (int j = 0; j < B; ++j) {
      const Vec4T<float> bj = tile[j];
      {
        float dx[K], dy[K], dz[K], r[K];
#pragma unroll
        for (int k = 0; k < K; ++k) {
          dx[k] = bj.x - x[k], dy[k] = bj.y - y[k], dz[k] = bj.z - z[k];
          float d2 = fmaf(dx[k], dx[k], eps2);
          d2 = fmaf(dy[k], dy[k], d2);
          r[k] = fmaf(dz[k], dz[k], d2);
        }
#pragma unroll
        for (int k = 0; k < K; ++k) r[k] = kMode == 1 && k == K - 1 ? rsqrt_newton(r[k]) : rsqrt_fast(r[k]);
#pragma unroll
        for (int k = 0; k < K; ++k) {
          const float s = (bj.w * r[k]) * (r[k] * r[k]);
          ax[k] = fmaf(dx[k], s, ax[k]), ay[k] = fmaf(dy[k], s, ay[k]), az[k] = fmaf(dz[k], s, az[k]);
        }
      }
    }
  }
#pragma unroll
  for (int k = 0; k < K; ++k) acc[first + k * B] = Vec4T<float>{ax[k], ay[k], az[k], 0};
}

struct Timed {
  float ms;
  double err;
};

template <typename Launch>
Timed run(Launch launch, Vec4T<float>* d_acc, int n, const std::vector<Vec4T<float>>& ref, bool zero) {
  std::vector<float> ms;
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int rep = 0; rep < 6; ++rep) {
    if (zero) CK(cudaMemsetAsync(d_acc, 0, sizeof(Vec4T<float>) * n));
    CK(cudaEventRecord(a));
    launch();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    CK(cudaGetLastError());
    float m = 0;
    CK(cudaEventElapsedTime(&m, a, b));
    if (rep > 0) ms.push_back(m);  // the first is the warm-up
  }
  if (zero) CK(cudaMemset(d_acc, 0, sizeof(Vec4T<float>) * n));
  launch();
  std::vector<Vec4T<float>> h(n);
  CK(cudaMemcpy(h.data(), d_acc, sizeof(Vec4T<float>) * n, cudaMemcpyDeviceToHost));
  double num = 0, den = 0;
  for (int i = 0; i < n; ++i) {
    const double ex = h[i].x - ref[i].x, ey = h[i].y - ref[i].y, ez = h[i].z - ref[i].z;
    num += ex * ex + ey * ey + ez * ez;
    den += double(ref[i].x) * ref[i].x + double(ref[i].y) * ref[i].y + double(ref[i].z) * ref[i].z;
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], std::sqrt(num / den)};
}

// What every family of variants shares: the bodies on the device, the reference forces, the
// filter, and the tally of variants run and found wrong.
struct Session {
  int n = 0, sms = 0;
  float eps2 = 0.05f * 0.05f;
  std::vector<Vec4T<float>> h, ref;
  Vec4T<float>*d_pos = nullptr, *d_acc = nullptr;
  std::string only;
  int ran = 0, wrong = 0;
  bool want(const char* name) const { return std::string(name).find(only) != std::string::npos; }
  // A variant whose forces differ from the reference by more than float sums in another order
  // (measured up to 1.6e-5 rms at N = 2^20) is a wrong kernel: it is marked and the exit is 1.
  void report(const char* name, Timed t) {
    const bool bad = !(t.err <= 1e-4);
    ran += 1, wrong += bad;
    std::printf("%-34s %9.3f ms  %.4e /s  err %.2e%s\n", name, t.ms, double(n) * n / (t.ms * 1e-3), t.err,
                bad ? "  WRONG" : "");
  }
};

void time_tuned(Session& s) {
  const int n = s.n;
  const float eps2 = s.eps2;
  Vec4T<float>*d_pos = s.d_pos, *d_acc = s.d_acc;
  // cuda:tuned's kernel with `block` threads of k bodies (no j split: one grid row).
  auto tuned = [&](const char* name, auto kernel, int block, int k) {
    if (!s.want(name)) return;
    s.report(name, run([&] { kernel<<<n / (block * k), block, block * sizeof(Vec4T<float>)>>>(d_pos, d_acc, n, eps2, 0, 0, 1); },
                     d_acc, n, s.ref, false));
  };
  auto variant = [&](const char* name, auto kernel) {  // tuned_variant above: B = 128, K = 8
    if (!s.want(name)) return;
    s.report(name, run([&] { kernel<<<n / 1024, 128, 128 * sizeof(Vec4T<float>)>>>(d_pos, d_acc, n, eps2); }, d_acc, n, s.ref, false));
  };
  tuned("tuned K=8 min 0 (before)", tuned_forces<float, 8>, 128, 8);
  variant("tuned K=8 staged rsqrts", tuned_variant<8, 0>);
  variant("tuned K=8 1 of 8 rsqrt by Newton", tuned_variant<8, 1>);
  tuned("tuned K=16", tuned_forces<float, 16>, 128, 16);
  tuned("tuned K=8 B=256", tuned_forces<float, 8>, 256, 8);
  tuned("tuned K=8 min 1 (production)", tuned_forces<float, 8, 1>, 128, 8);  // __launch_bounds__(256, 1)
  tuned("tuned K=16 min 1", tuned_forces<float, 16, 1>, 128, 16);
  tuned("tuned K=8 B=256 min 1", tuned_forces<float, 8, 1>, 256, 8);
  tuned("tuned K=4 min 1", tuned_forces<float, 4, 1>, 128, 4);
  tuned("tuned K=4 B=128", tuned_forces<float, 4>, 128, 4);
}

void time_mixed(Session& s) {
  const int n = s.n;
  const float eps2 = s.eps2;
  const auto& h = s.h;
  const auto& ref = s.ref;
  // cuda:mixed's force kernel (no j split), from the same bodies in double.
  auto mixed = [&](const char* name, auto kernel) {
    if (!s.want(name)) return;
    std::vector<Vec4T<double>> hd(n);
    for (int i = 0; i < n; ++i) hd[i] = {h[i].x, h[i].y, h[i].z, h[i].w};
    Vec4T<double>*d_pd, *d_ad;
    CK(cudaMalloc(&d_pd, sizeof(Vec4T<double>) * n));
    CK(cudaMalloc(&d_ad, sizeof(Vec4T<double>) * n));
    CK(cudaMemcpy(d_pd, hd.data(), sizeof(Vec4T<double>) * n, cudaMemcpyHostToDevice));
    std::vector<float> ms;
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int rep = 0; rep < 6; ++rep) {
      CK(cudaEventRecord(a));
      kernel<<<dim3(n / 1024, 1), 128, 2 * 128 * sizeof(Vec4T<float>)>>>(d_pd, d_ad, n, eps2, 0, 0, 1);
      CK(cudaEventRecord(b));
      CK(cudaEventSynchronize(b));
      CK(cudaGetLastError());
      float m = 0;
      CK(cudaEventElapsedTime(&m, a, b));
      if (rep > 0) ms.push_back(m);
    }
    std::sort(ms.begin(), ms.end());
    std::vector<Vec4T<double>> out(n);
    CK(cudaMemcpy(out.data(), d_ad, sizeof(Vec4T<double>) * n, cudaMemcpyDeviceToHost));
    double num = 0, den = 0;
    for (int i = 0; i < n; ++i) {
      const double ex = out[i].x - ref[i].x, ey = out[i].y - ref[i].y, ez = out[i].z - ref[i].z;
      num += ex * ex + ey * ey + ez * ez;
      den += double(ref[i].x) * ref[i].x + double(ref[i].y) * ref[i].y + double(ref[i].z) * ref[i].z;
    }
    s.report(name, {ms[ms.size() / 2], std::sqrt(num / den)});
    CK(cudaFree(d_pd));
    CK(cudaFree(d_ad));
  };
  mixed("mixed K=8", mixed_forces<8>);
  mixed("mixed K=8 min 1", mixed_forces<8, 1>);
}

void time_symmetric(Session& s) {
  const int n = s.n, sms = s.sms;
  const float eps2 = s.eps2;
  Vec4T<float>*d_pos = s.d_pos, *d_acc = s.d_acc;
  auto sym = [&](const char* name, auto kernel, int k) {
    if (!s.want(name)) return;
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 128, 0));
    const int tiles = n / (32 * k);
    const long long pairs = 1LL * tiles * (tiles + 1) / 2;
    const long long warps = std::min<long long>(pairs, 1LL * sms * per_sm * 4);
    const int blocks = static_cast<int>((warps + 3) / 4);
    char label[64];
    std::snprintf(label, sizeof label, "%s (%d blocks/SM)", name, per_sm);
    s.report(label, run([&] { kernel<<<blocks, 128>>>(d_pos, d_acc, tiles, eps2); }, d_acc, n, s.ref, true));
  };
  sym("symmetric K=4 min 0", symmetric_forces<4, 4, 1, 0>, 4);
  sym("symmetric K=8 min 0", symmetric_forces<8, 8, 1, 0>, 8);
  sym("symmetric K=16 KJ=2 2 steps min 0", symmetric_forces<16, 2, 2, 0>, 16);
  sym("symmetric K=4", symmetric_forces<4, 4>, 4);
  sym("symmetric K=8", symmetric_forces<8, 8>, 8);
  sym("symmetric K=8 KJ=4", symmetric_forces<8, 4>, 8);
  sym("symmetric K=8 KJ=2", symmetric_forces<8, 2>, 8);
  sym("symmetric K=16 KJ=2", symmetric_forces<16, 2>, 16);
  sym("symmetric K=16 KJ=4", symmetric_forces<16, 4>, 16);
  sym("symmetric K=16 KJ=8", symmetric_forces<16, 8>, 16);
  sym("symmetric K=8 2 steps unrolled", symmetric_forces<8, 8, 2>, 8);
  sym("symmetric K=16 KJ=2 2 steps", symmetric_forces<16, 2, 2>, 16);
  sym("symmetric K=16 KJ=2 4 steps", symmetric_forces<16, 2, 4>, 16);
  sym("symmetric K=8 KJ=4 2 steps", symmetric_forces<8, 4, 2>, 8);
  // More warps per scheduler, the registers capped by __launch_bounds__' minimum blocks per SM.
  sym("symmetric K=8 KJ=4 2 steps min 5", symmetric_forces<8, 4, 2, 5>, 8);
  sym("symmetric K=8 KJ=2 2 steps min 6", symmetric_forces<8, 2, 2, 6>, 8);
  sym("symmetric K=8 KJ=2 4 steps", symmetric_forces<8, 2, 4>, 8);
  sym("symmetric K=16 KJ=2 2 steps min 4", symmetric_forces<16, 2, 2, 4>, 16);
}

int main(int argc, char** argv) {
  Session s;
  s.n = argc > 1 ? std::atoi(argv[1]) : 262144;
  const int n = s.n;
  if (n <= 0 || n % 2048 != 0) {  // no padding here: every variant's tile and block must divide N
    std::fprintf(stderr, "force_variants: N = %s must be a positive multiple of 2048\n", argc > 1 ? argv[1] : "");
    return 2;
  }
  std::mt19937_64 rng(1);
  std::normal_distribution<float> g(0.f, 1.f);
  s.h.resize(n);
  for (auto& b : s.h) b = {g(rng), g(rng), g(rng), 1.0f / n};
  CK(cudaMalloc(&s.d_pos, sizeof(Vec4T<float>) * n));
  CK(cudaMalloc(&s.d_acc, sizeof(Vec4T<float>) * n));
  CK(cudaMemcpy(s.d_pos, s.h.data(), sizeof(Vec4T<float>) * n, cudaMemcpyHostToDevice));
  CK(cudaDeviceGetAttribute(&s.sms, cudaDevAttrMultiProcessorCount, 0));
  // The reference: the production cuda:tuned kernel (K = 8, B = 128).
  s.ref.resize(n);
  tuned_forces<float, 8><<<n / 1024, 128, 128 * sizeof(Vec4T<float>)>>>(s.d_pos, s.d_acc, n, s.eps2, 0, 0, 1);
  CK(cudaMemcpy(s.ref.data(), s.d_acc, sizeof(Vec4T<float>) * n, cudaMemcpyDeviceToHost));
  std::printf("N = %d; rate = N^2 / kernel time; err = rms relative to cuda:tuned's kernel\n", n);
  s.only = argc > 2 ? argv[2] : "";
  time_tuned(s);
  time_mixed(s);
  time_symmetric(s);
  if (s.ran == 0) {
    std::fprintf(stderr, "force_variants: no variant's name holds '%s'\n", s.only.c_str());
    return 2;
  }
  if (s.wrong) std::fprintf(stderr, "force_variants: %d of %d variants WRONG\n", s.wrong, s.ran);
  return s.wrong ? 1 : 0;
}
