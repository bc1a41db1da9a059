#include <filesystem>

#include "runtime/runtime.hpp"
#include "search/search.hpp"
#include "store/store.hpp"
#include "tests/catch.hpp"

using namespace gemmtune;

namespace {
Problem shape(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t lda = 0) {
  Problem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.lda = lda;
  return p.normalized();
}
Attempt stored(const Problem& p, const char* config, double t, const char* device = "H100-SXM") {
  Attempt a;
  a.device = device;
  a.problem = p;
  a.config = KernelConfig::parse(config);
  a.median_s = t;
  return a;
}
}  // namespace

TEST_CASE("runtime: dispatch prefers stored, then the nearest tuned shape, then the model",
          "[runtime]") {
  const DeviceSpec d = find_builtin_device("H100-SXM");
  const auto path = std::filesystem::temp_directory_path() / "gemmtune_dispatch_test.db";
  for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + s);

  // No store at all: the model's pick, ranked with the shipped calibration, and the missing
  // file is not created.
  const auto shipped = shipped_calibration(d.name);
  REQUIRE(shipped);
  const ModelCoefficients shipped_coefficients = coefficients_from_json(shipped->json);
  DispatchChoice c = choose_kernel(shape(1024, 1024, 1024), d, path.string());
  CHECK(c.source == DispatchSource::Model);
  CHECK(c.config ==
        rank_space(shape(1024, 1024, 1024), d, 1, shipped_coefficients).top.front().config);
  CHECK(c.calibration ==
        "shipped calibration for H100-SXM (model v" + std::to_string(kModelVersion) + ")");
  CHECK_FALSE(std::filesystem::exists(path));

  {
    Database db(path.string());
    db.add_all({stored(shape(1024, 1024, 1024), "BM64_BN64_BK16_DX16_DY16_DXA16_DXB16", 1e-3),
                stored(shape(1024, 1024, 1024), "BM32_BN32_BK16_DX8_DY8_DXA32_DXB16", 2e-3),
                stored(shape(4096, 4096, 4096), "BM128_BN64_BK16_DX16_DY16_DXA32_DXB16_VA4", 5e-2),
                stored(shape(1024, 1024, 1024), "BM16_BN16_BK16_DX4_DY8_DXA16_DXB16", 1e-3,
                       "A100-SXM4-80GB")});
  }
  // Exact shape: its fastest kernel.
  c = choose_kernel(shape(1024, 1024, 1024), d, path.string());
  CHECK(c.source == DispatchSource::Stored);
  CHECK(c.config == KernelConfig::parse("BM64_BN64_BK16_DX16_DY16_DXA16_DXB16"));
  // A shape never tuned: the nearest tuned one (1024 is nearer to 1500 than 4096 is).
  c = choose_kernel(shape(1500, 1500, 1500), d, path.string());
  CHECK(c.source == DispatchSource::NearestShape);
  CHECK(c.from == "s_nn_1024x1024x1024_b1");
  c = choose_kernel(shape(3500, 4000, 4096), d, path.string());
  CHECK(c.source == DispatchSource::NearestShape);
  CHECK(c.config.vec_a == 4);
  // The nearest kernel is invalid here (vector width 4, lda 3501 is odd): skip to the next one.
  c = choose_kernel(shape(3501, 4000, 4096), d, path.string());
  CHECK(c.source == DispatchSource::NearestShape);
  CHECK(c.from == "s_nn_1024x1024x1024_b1");
  // Another precision was never tuned: the model.
  Problem z = shape(1024, 1024, 1024);
  z.precision = Precision::D;
  CHECK(choose_kernel(z, d, path.string()).source == DispatchSource::Model);
  // Another device's results are not used.
  CHECK(choose_kernel(shape(1024, 1024, 1024), find_builtin_device("A100"), path.string()).source ==
        DispatchSource::Stored);
  CHECK(choose_kernel(shape(1024, 1024, 1024), find_builtin_device("V100"), path.string()).source ==
        DispatchSource::Model);
  // The store's calibration for the device outranks the shipped one for the model's pick.
  ModelCoefficients own;
  own.fma_efficiency = 0.6;
  own.mem_latency_cycles = 1500;
  Database(path.string()).save_calibration(d.name, coefficients_to_json(own));
  c = choose_kernel(z, d, path.string());
  CHECK(c.source == DispatchSource::Model);
  CHECK_THAT(c.calibration, Catch::StartsWith("store calibration of "));
  CHECK(c.config == rank_space(z, d, 1, own).top.front().config);
  for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + s);
}
