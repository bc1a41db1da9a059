#include <cstdio>
#include <fstream>

#include "core/core.hpp"
#include "tests/catch.hpp"

using namespace gemmtune;

TEST_CASE("device: the built-in table has the required GPUs with sane figures", "[core]") {
  for (const char* name :
       {"H100-SXM", "H100-PCIe", "H200", "A100-SXM4-80GB", "V100-SXM2", "RTX4090", "GTX1060"}) {
    INFO(name);
    const DeviceSpec d = find_builtin_device(name);
    CHECK_NOTHROW(d.validate());
  }
  // Seed 001: the GTX 1060's peak is 3855 GFLOP/s single precision.
  CHECK(find_builtin_device("GTX1060").peak_gflops(Precision::S) == Approx(3855).epsilon(0.001));
  // The task's figure for the H100: 132 SMs x 128 lanes x 2 x 1.98 GHz = 66.9 TFLOP/s.
  CHECK(find_builtin_device("H100-SXM").peak_gflops(Precision::S) == Approx(66908).epsilon(0.001));
  // D and Z on the FP64 tensor cores (67 TFLOP/s); without them (V100) the SIMT pipe's rate.
  CHECK(find_builtin_device("H100-SXM").peak_gflops(Precision::D) == Approx(66908).epsilon(0.001));
  CHECK(find_builtin_device("H100-SXM").peak_gflops(Precision::Z) == Approx(66908).epsilon(0.001));
  CHECK(find_builtin_device("V100-SXM2").peak_gflops(Precision::Z) ==
        Approx(find_builtin_device("V100-SXM2").peak_gflops(Precision::S) / 2).epsilon(0.001));
  CHECK(find_builtin_device("h100 sxm").name == "H100-SXM");
  CHECK(find_builtin_device("a100").name == "A100-SXM4-80GB");
}

TEST_CASE("device: unknown names list the known ones", "[core]") {
  CHECK_THROWS_WITH(find_builtin_device("B300"), Catch::Contains("'B300'") &&
                                                     Catch::Contains("H100-SXM") &&
                                                     Catch::Contains("GTX1060"));
}

TEST_CASE("device: JSON round-trips for every built-in spec", "[core]") {
  for (const auto& d : builtin_devices()) {
    INFO(d.name);
    CHECK(device_from_json(device_to_json(d)) == d);
  }
}

TEST_CASE("device: malformed JSON specs are rejected with the reason", "[core]") {
  CHECK_THROWS_WITH(device_from_json("{ not json"), Catch::Contains("not valid JSON"));
  CHECK_THROWS_WITH(device_from_json("[1,2]"), Catch::Contains("object"));
  std::string j = device_to_json(find_builtin_device("H100-SXM"));
  CHECK_THROWS_WITH(device_from_json(j.replace(j.find("\"sm_count\""), 10, "\"sm_cnt\"")),
                    Catch::Contains("sm_count"));
  std::string typed = device_to_json(find_builtin_device("V100"));
  typed.replace(typed.find("80,"), 2, "\"eighty\"");
  CHECK_THROWS_WITH(device_from_json(typed), Catch::Contains("wrong type"));
  DeviceSpec bad = find_builtin_device("A100");
  bad.sm_count = 0;
  CHECK_THROWS_WITH(device_from_json(device_to_json(bad)), Catch::Contains("sm_count"));
  bad = find_builtin_device("A100");
  bad.cc_major = 3;
  CHECK_THROWS_WITH(device_from_json(device_to_json(bad)),
                    Catch::Contains("compute capability 3.0"));
  CHECK_THROWS_WITH(load_device_file("/nonexistent/spec.json"), Catch::Contains("cannot read"));
  const std::string path = "gemmtune_test_spec.json";
  std::ofstream(path) << "{\"name\": \"x\"}";
  CHECK_THROWS_WITH(load_device_file(path), Catch::Contains(path) && Catch::Contains("lacks"));
  std::remove(path.c_str());
}
