#include <algorithm>

#include "model/model.hpp"
#include "search/search.hpp"
#include "tests/catch.hpp"

using namespace gemmtune;

static Problem sq(Precision pr, std::int64_t m, std::int64_t n, std::int64_t k) {
  Problem p;
  p.precision = pr;
  p.m = m;
  p.n = n;
  p.k = k;
  return p.normalized();
}

static const KernelConfig kConfig =
    KernelConfig::parse("BM128_BN128_BK8_DX16_DY16_DXA32_DXB8_VA4_VB1_PF3_ST2");

TEST_CASE("model: counts on full tiles are exact", "[model]") {
  const DeviceSpec h100 = find_builtin_device("H100-SXM");
  const Problem p = sq(Precision::S, 4096, 4096, 4096);
  const Prediction r = predict(p, h100, kConfig);
  CHECK(r.fma_count == Approx(4096.0 * 4096 * 4096));
  CHECK(r.tiles == 32 * 32);
  CHECK(r.smem_bytes == 2 * (8 * 128 + 8 * 128) * 4);
  CHECK(r.gflops <= h100.peak_gflops(Precision::S));
  CHECK(r.dram_bytes >= p.min_bytes());
  // Complex: four real FMAs per element product.
  CHECK(predict(sq(Precision::C, 1024, 1024, 1024), h100,
                KernelConfig::parse("BM64_BN64_BK8_DX16_DY16_DXA64_DXB8"))
            .fma_count == Approx(4.0 * 1024 * 1024 * 1024));
}

TEST_CASE("model: ragged edges compute whole tiles", "[model]") {
  const DeviceSpec h100 = find_builtin_device("H100-SXM");
  const Prediction r = predict(sq(Precision::S, 4097, 4097, 4097), h100, kConfig);
  CHECK(r.tiles == 33 * 33);
  CHECK(r.fma_count == Approx(33.0 * 128 * 33 * 128 * 4104));
}

TEST_CASE("model: the limiting term follows the problem", "[model]") {
  const DeviceSpec h100 = find_builtin_device("H100-SXM");
  // Large SGEMM: bound inside the SM (FMA pipe, issue slots or shared memory), not by memory.
  // This 8x8 strided thread tile reads 16 scalars per 64 FMAs, each LDS a whole wavefront
  // that carries 64 useful bytes: shared memory binds.
  const Prediction big = predict(sq(Precision::S, 8192, 8192, 8192), h100, kConfig);
  CHECK(big.limit == TimeLimit::SharedMemory);
  CHECK(big.t_dram < big.time_s / 4);
  // K = 8: every element of C written for 8 FMAs: bound by moving C. 16 lanes along M, one
  // row apart, write whole sectors (4 per warp store, the minimum for FP32); with 4-row groups
  // (VS4) the same store scatters over 16 sectors and the SM's store path binds.
  const Prediction skinny = predict(sq(Precision::S, 8192, 8192, 8), h100, kConfig);
  const Problem k8 = sq(Precision::S, 8192, 8192, 8);
  CHECK(c_store_sectors_per_warp(kConfig, k8) == 4);
  KernelConfig scattered = kConfig;
  scattered.vec_s = 4;
  CHECK(c_store_sectors_per_warp(scattered, k8) == 16);
  const Prediction slow = predict(k8, h100, scattered);
  CHECK(slow.limit == TimeLimit::Store);
  CHECK(slow.t_store == Approx(4 * skinny.t_store));
  CHECK(slow.time_s > 1.5 * skinny.time_s);
  // VC1: each lane stores its 4 rows as one 16-byte vector, so a column's 16 lanes fill 8 whole
  // sectors with 64 elements, the minimum again; where ldc is not a multiple of 4 the kernel
  // stores element by element and the scatter returns.
  KernelConfig vector_c = scattered;
  vector_c.vec_c = 1;
  CHECK(c_store_sectors_per_warp(vector_c, k8) == 4);
  CHECK(predict(k8, h100, vector_c).t_store == Approx(skinny.t_store));
  Problem ragged = k8;
  ragged.ldc = 8194;
  CHECK(c_store_sectors_per_warp(vector_c, ragged) == 16);
  // SL1 predicts as SL0 does: the SASS of the S 1000^3 winner has about as many instructions
  // either way (3,120 and 3,160): what differs is the schedule,
  // which the tuner measures (both twins) rather than the model guessing.
  KernelConfig wide = KernelConfig::parse("BM128_BN128_BK8_DX16_DY16_DXA32_DXB32_VS4_LA1_LB1");
  const Prediction sl0 = predict(sq(Precision::S, 4096, 4096, 4096), h100, wide);
  wide.shared32 = 1;
  CHECK(predict(sq(Precision::S, 4096, 4096, 4096), h100, wide).time_s == sl0.time_s);
  CHECK((skinny.limit == TimeLimit::Dram || skinny.limit == TimeLimit::Store));
  // A tiny problem is launch-bound.
  CHECK(predict(sq(Precision::S, 16, 16, 16), h100,
                KernelConfig::parse("BM16_BN16_BK8_DX4_DY8_DXA16_DXB8"))
            .limit == TimeLimit::Launch);
  // DGEMM on H100: the FP64 pipe is half as wide, so the same tile takes longer.
  CHECK(predict(sq(Precision::D, 8192, 8192, 8192), h100, kConfig).t_compute ==
        Approx(2 * big.t_compute));
}

TEST_CASE("model: time grows with K and wave quantization shows", "[model]") {
  const DeviceSpec h100 = find_builtin_device("H100-SXM");
  double last = 0;
  for (int k : {256, 1024, 4096, 16384}) {
    const double t = predict(sq(Precision::S, 4096, 4096, k), h100, kConfig).time_s;
    CHECK(t > last);
    last = t;
  }
  // 132 SMs: 11 x 12 = 132 tiles fill one wave; 133 tiles need a second round on one SM.
  const Prediction full = predict(sq(Precision::S, 11 * 128, 12 * 128, 4096), h100, kConfig);
  const Prediction spill = predict(sq(Precision::S, 11 * 128 + 1, 12 * 128, 4096), h100, kConfig);
  CHECK(full.wave_efficiency == Approx(1.0));
  CHECK(spill.wave_efficiency < 0.6);
  CHECK(spill.time_s > 1.5 * full.time_s);
}

TEST_CASE("model: compiler registers replace the estimate and lower occupancy", "[model]") {
  const DeviceSpec h100 = find_builtin_device("H100-SXM");
  const Problem p = sq(Precision::S, 4096, 4096, 4096);
  const Prediction lean = predict(p, h100, kConfig, {}, 64);
  const Prediction fat = predict(p, h100, kConfig, {}, 200);
  CHECK(lean.registers_from_compiler);
  CHECK(lean.occ.blocks_per_sm > fat.occ.blocks_per_sm);
  CHECK(fat.occ.limit == OccupancyLimit::Registers);
}

TEST_CASE("model: bank conflicts follow the shared layout and padding", "[model]") {
  // Op T: threads read A along K and store it into a [K][M] tile: stride BLK_M words.
  KernelConfig c = KernelConfig::parse("BM64_BN64_BK8_DX16_DY16_DXA8_DXB8_LA1_PD0");
  BankProfile b = bank_profile(c, Precision::S, Op::T, Op::N);
  // Lane (kk, m) = (t % 8, t / 8) writes word kk * 64 + m: banks 0..3, eight words each.
  CHECK(b.store_a == 8);
  c.pad = 1;  // kk * 65 + m: bank kk + m, up to four lanes share one
  CHECK(bank_profile(c, Precision::S, Op::T, Op::N).store_a == 4);
  c.pad = 4;  // kk * 68 + m: bank 4 kk + m, all 32 distinct
  b = bank_profile(c, Precision::S, Op::T, Op::N);
  CHECK(b.store_a == 1);
  CHECK(b.read_a == 1);
  // Doubles: 32 lanes x 8 bytes = two wavefronts even without conflicts.
  CHECK(bank_profile(KernelConfig::parse("BM64_BN64_BK8_DX32_DY8_DXA64_DXB8"), Precision::D, Op::N,
                     Op::N)
            .read_a == 2);
}

TEST_CASE("model: ranking is fast, ordered and explains itself", "[model]") {
  const DeviceSpec h100 = find_builtin_device("H100-SXM");
  const Ranking r = rank_space(sq(Precision::S, 2048, 2048, 2048), h100, 20);
  REQUIRE(r.top.size() == 20);
  for (size_t i = 1; i < r.top.size(); ++i)
    CHECK(r.top[i - 1].prediction.time_s <= r.top[i].prediction.time_s);
  CHECK(r.evaluated == std::int64_t(r.funnel.rows.back().remaining));
  CHECK_THAT(r.top[0].prediction.why(), Catch::Contains("occupancy"));
  CHECK_THROWS_WITH(rank_space(sq(Precision::S, 64, 64, 64), h100, 0), Catch::Contains("top k"));

  // The walk runs on every hardware thread; the ranking must still be the serial one: sorted by
  // prediction, equal predictions in the enumeration's order.
  for (const Problem& p :
       {sq(Precision::S, 1000, 1000, 1000), sq(Precision::D, 2048, 2048, 2048)}) {
    INFO(p.shape_id());
    const SpaceDomain compact = SpaceDomain::named("compact");
    std::vector<std::pair<double, KernelConfig>> serial;
    for (const KernelConfig& c : pruned_space(p, h100, compact))
      serial.emplace_back(predict(p, h100, c).time_s, c);
    std::stable_sort(serial.begin(), serial.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    const Ranking ranked = rank_space(p, h100, 300, {}, compact);
    REQUIRE(ranked.top.size() == 300);
    CHECK(ranked.evaluated == std::int64_t(serial.size()));
    for (size_t i = 0; i < ranked.top.size(); ++i) {
      INFO("rank " << i);
      CHECK(ranked.top[i].config == serial[i].second);
    }
  }
}

TEST_CASE("model: FP64 tensor-core kernels", "[model]") {
  const DeviceSpec h100 = find_builtin_device("H100-SXM");
  const Problem p = sq(Precision::D, 4096, 4096, 4096);
  const KernelConfig simt =
      KernelConfig::parse("BM64_BN256_BK16_DX8_DY32_DXA16_DXB8_VA1_VB2_LA1_LB1_PD4_PF3_ST2");
  KernelConfig mma = simt, m8n8k4 = simt;
  mma.mma = 2;
  m8n8k4.mma = 1;
  REQUIRE_FALSE(check_hard(p, h100, mma));
  REQUIRE_FALSE(check_hard(p, h100, m8n8k4));
  const Prediction on_simt = predict(p, h100, simt, {}, 200);
  const Prediction on_mma = predict(p, h100, mma, {}, 200);
  // Same tiles, same FMAs, twice the FMA rate (128 vs 64 per clock per SM) with m16n8k4; on
  // Hopper m8n8k4 only reaches the SIMT pipe's rate.
  CHECK(on_mma.fma_count == on_simt.fma_count);
  CHECK(on_mma.t_compute == Approx(0.5 * on_simt.t_compute));
  CHECK(on_mma.time_s < on_simt.time_s);
  CHECK(predict(p, h100, m8n8k4, {}, 200).t_compute == Approx(on_simt.t_compute));
  // The A100 has no m16n8k4; its m8n8k4 runs at its full tensor rate (64 vs 32 SIMT).
  const DeviceSpec a100 = find_builtin_device("A100");
  CHECK(check_hard(p, a100, mma));
  CHECK(predict(p, a100, m8n8k4, {}, 200).t_compute ==
        Approx(0.5 * predict(p, a100, simt, {}, 200).t_compute));

  // Fragment reads: 4 rows of k, 8 doubles each. A row pitch of 64 doubles puts the 4 rows on
  // the same banks (4 wavefronts); 68 spreads them over all 32 (2, the least for 256 bytes).
  KernelConfig unpadded = mma;
  unpadded.pad = 0;
  CHECK(bank_profile(unpadded, Precision::D, Op::N, Op::N).read_a == 4);
  CHECK(bank_profile(mma, Precision::D, Op::N, Op::N).read_a == 2);
  // One store instruction: 8 consecutive rows (64 bytes, 2 sectors) in each of 4 columns.
  CHECK(c_store_sectors_per_warp(mma, sq(Precision::D, 1024, 1024, 1024)) == 8);

  // m16n8k8 and m16n8k16: the same tensor rate in 2x and 4x fewer instructions, and fragments
  // of an N-major B tile read as 16-byte pairs (a K-major one cannot).
  KernelConfig k8 = mma, k16 = mma;
  k8.mma = 3;
  k16.mma = 4;
  const Prediction on_k8 = predict(p, h100, k8, {}, 200), on_k16 = predict(p, h100, k16, {}, 200);
  CHECK(on_k8.t_compute == Approx(on_mma.t_compute));
  CHECK(on_k16.t_compute == Approx(on_mma.t_compute));
  CHECK(on_k8.fmas_per_tensor_instr == 1024);
  CHECK(on_k16.fmas_per_tensor_instr == 2048);
  CHECK(on_mma.fmas_per_tensor_instr == 512);
  CHECK(on_k16.t_issue < on_k8.t_issue);
  CHECK(on_k8.t_issue < on_mma.t_issue);
  CHECK(mma_fragment_vector(k8, Precision::D, false) == 1);  // this tiling's B is K-major (LB1)
  KernelConfig n_major = k8;
  n_major.smem_b_kmajor = 0;
  CHECK(mma_fragment_vector(n_major, Precision::D, false) == 2);
  CHECK(mma_fragment_vector(n_major, Precision::D, true) == 1);
  n_major.mma = 2;
  CHECK(mma_fragment_vector(n_major, Precision::D, false) == 1);  // one k per lane: nothing to pair
  CHECK(mma_fragment_vector(n_major, Precision::Z, false) == 1);  // a complex value is 16 bytes
  // ZGEMM on tensor cores: four real mma per complex tile, the same rate per real FMA.
  const Problem z = sq(Precision::Z, 4096, 4096, 4096);
  const KernelConfig z_k8 =
      KernelConfig::parse("BM96_BN96_BK32_DX16_DY16_DXA8_DXB8_VA1_VB1_LA1_LB0_PD1_PF0_ST2_MM3_AC1");
  KernelConfig z_simt = z_k8, d_k8 = z_k8;
  z_simt.mma = 0;
  REQUIRE_FALSE(check_hard(z, h100, z_k8));
  REQUIRE_FALSE(check_hard(p, h100, d_k8));
  const Prediction on_z = predict(z, h100, z_k8, {}, 200), on_d = predict(p, h100, d_k8, {}, 200);
  CHECK(on_z.fma_count == 4 * on_d.fma_count);
  CHECK(on_z.t_compute == Approx(4 * on_d.t_compute));
  CHECK(on_z.fmas_per_tensor_instr == 1024);
  CHECK(on_z.t_compute == Approx(0.5 * predict(z, h100, z_simt, {}, 200).t_compute));
  CHECK(h100.peak_gflops(Precision::Z) == Approx(h100.peak_gflops(Precision::D)));
  // A lane's two k of m16n8k8 are 2 K-major rows apart: a pitch of 68 doubles puts lanes
  // 0-3 of a row group on banks 0-15, 16-31, 0-15, 16-31: 2 wavefronts, the least.
  CHECK(bank_profile(k8, Precision::D, Op::N, Op::N).read_a == 2);
  KernelConfig k8_pitch64 = k8;
  k8_pitch64.pad = 0;
  CHECK(bank_profile(k8_pitch64, Precision::D, Op::N, Op::N).read_a == 4);

  // Without tensor cores there is nothing to predict with.
  CHECK_THROWS_WITH(predict(p, find_builtin_device("V100-SXM2"), mma),
                    Catch::Contains("FP64 tensor cores"));
}

TEST_CASE("model: split-K fills the SMs for small M x N and pays a pass over C", "[model]") {
  const DeviceSpec h100 = find_builtin_device("H100-SXM");
  const Problem p = sq(Precision::S, 256, 256, 65536);
  const KernelConfig whole =
      KernelConfig::parse("BM64_BN64_BK16_DX16_DY16_DXA16_DXB4_VA4_VB4_LA1_LB1_PD4_PF3_ST2");
  KernelConfig split = whole;
  split.split_k = 16;
  REQUIRE_FALSE(check_hard(p, h100, split));
  const Prediction one = predict(p, h100, whole, {}, 128), many = predict(p, h100, split, {}, 128);
  CHECK(one.tiles == 16);
  CHECK(many.tiles == 16 * 16);
  CHECK(many.fma_count == one.fma_count);  // the same K steps, shared out
  CHECK(many.time_s < 0.2 * one.time_s);   // 16 of 132 SMs busy without the split
  CHECK(many.t_split_pass > 0);
  CHECK(one.t_split_pass == 0);
  CHECK(many.t_launch == Approx(2 * one.t_launch));
  CHECK(many.l2_bytes > one.l2_bytes);  // each split's read-modify-write of C
  CHECK_THAT(many.why(), Catch::Contains("split-K pass over C"));
}

TEST_CASE("model: the cp.async pipeline hides latency with depth and frees registers", "[model]") {
  const DeviceSpec h100 = find_builtin_device("H100-SXM");
  const Problem p = sq(Precision::S, 4096, 4096, 4096);
  const KernelConfig staged =
      KernelConfig::parse("BM128_BN128_BK16_DX16_DY16_DXA32_DXB4_VA4_VB4_LA1_LB0_PD4_PF3_ST2");
  KernelConfig piped = staged;
  piped.async_copy = 1;
  piped.prefetch = 0;
  const RegisterModel& regs = default_register_model(Precision::S);
  CHECK(estimate_registers(piped, p.precision, regs) <
        estimate_registers(staged, p.precision, regs));
  // With everything else held (registers as compiled), deeper pipelines expose less latency.
  double previous = 1e30;
  for (int stages : {2, 3, 4}) {
    piped.stages = stages;
    const Prediction r = predict(p, h100, piped, {}, 128);
    CHECK(r.time_s <= previous);
    previous = r.time_s;
  }
}

TEST_CASE("model: a fully unrolled cp.async kernel runs its last step across the barrier",
          "[model]") {
  const DeviceSpec h100 = find_builtin_device("H100-SXM");
  const Problem p = sq(Precision::D, 4096, 4096, 4096);
  // A one-block-per-SM D tile measured on the H100: 0.795 of cuBLAS with the plain loop (UR8, full
  // unroll of its 8 mma steps), 0.914 reading fragments across the barrier (UR0).
  const KernelConfig crossing = KernelConfig::parse(
      "BM128_BN128_BK32_DX32_DY16_DXA16_DYA32_DXB8_DYB64_VA2_VB2_LA1_LB0_PD4_PF0_ST3_UR0_RS8_VS1_"
      "ED0_MM2_AC1");
  KernelConfig plain = crossing;
  plain.unroll = 8;
  REQUIRE(crossing.fragments_cross_barrier());
  REQUIRE_FALSE(plain.fragments_cross_barrier());
  REQUIRE_FALSE(check_hard(p, h100, crossing));
  const Prediction with_wait = predict(p, h100, plain, {}, 128);
  const Prediction without = predict(p, h100, crossing, {}, 128);
  REQUIRE(with_wait.occ.blocks_per_sm == 1);
  // One barrier wait per K step (128 of them) in each of the busiest SM's 8 rounds, at least.
  const double waits_s = 8.0 * 128 * ModelCoefficients{}.sync_cycles / (h100.sm_clock_mhz * 1e6);
  CHECK(with_wait.time_s - without.time_s >= 0.999 * waits_s);
  // The SIMT cp.async kernel crosses too (on the H100 S 4096^3 BM256_BN128_BK8_DX32_DY8 ST3
  // went from 0.810 to 0.945 of cuBLAS); the register-staged one keeps its barrier whatever the
  // unroll.
  KernelConfig simt = KernelConfig::parse(
      "BM256_BN128_BK8_DX32_DY8_DXA32_DYA8_DXB8_DYB32_VA4_VB1_LA1_LB1_PD4_PF0_ST3_UR0_RS1_VS4_ED0_"
      "AC1_VC1");
  KernelConfig staged = crossing;
  staged.async_copy = 0;
  CHECK(simt.fragments_cross_barrier());
  CHECK_FALSE(staged.fragments_cross_barrier());
  KernelConfig simt_plain = simt;
  simt_plain.unroll = 8;
  const Problem s = sq(Precision::S, 4096, 4096, 4096);
  REQUIRE_FALSE(check_hard(s, h100, simt));
  CHECK(predict(s, h100, simt, {}, 215).time_s < predict(s, h100, simt_plain, {}, 215).time_s);
}

TEST_CASE("model: register prefetch hides the loads after the first K step, never the first",
          "[model]") {
  const DeviceSpec h100 = find_builtin_device("H100-SXM");
  KernelConfig prefetching =
      KernelConfig::parse("BM128_BN128_BK8_DX16_DY16_DXA32_DXB8_VA4_VB1_PF3_ST2");
  KernelConfig plain = prefetching;
  plain.prefetch = 0;
  // Registers held equal (one block of 256 threads per SM, so latency is not hidden by other
  // blocks), and only the overlap differs. One K step: nothing to overlap, the prologue's
  // latency is paid once either way.
  const Problem one_step = sq(Precision::S, 8192, 8192, 8);
  CHECK(predict(one_step, h100, prefetching, {}, 255).time_s ==
        Approx(predict(one_step, h100, plain, {}, 255).time_s));
  // Many steps at low occupancy: each later step's load is exposed without prefetch.
  const Problem many_steps = sq(Precision::S, 1024, 1024, 4096);
  const double with = predict(many_steps, h100, prefetching, {}, 255).time_s;
  const double without = predict(many_steps, h100, plain, {}, 255).time_s;
  CHECK(with < without);
  // The gap grows with the number of steps: one exposed latency per step after the first.
  const Problem fewer_steps = sq(Precision::S, 1024, 1024, 64);
  const double gap_fewer = predict(fewer_steps, h100, plain, {}, 255).time_s -
                           predict(fewer_steps, h100, prefetching, {}, 255).time_s;
  CHECK(without - with > 8 * gap_fewer);
}
