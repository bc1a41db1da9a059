// CUPTI host side, no GPU: configuration images for real chips from metric names, and errors
// that name the closest valid metric.
#include "catch.hpp"
#include "profiler/profiler.hpp"

using namespace gemmtune;

TEST_CASE("counter configuration images for GH100 and GA100 from metric names") {
  const auto chips = supported_chips();
  CHECK(std::find(chips.begin(), chips.end(), "GH100") != chips.end());
  CHECK(std::find(chips.begin(), chips.end(), "GA100") != chips.end());
  for (const char* chip : {"GH100", "GA100"}) {
    for (Precision p : {Precision::S, Precision::D}) {
      const CounterPlan plan = plan_counters(chip, default_counter_metrics(p));
      INFO(chip << " " << to_char(p) << ": " << plan.passes << " passes, "
                << plan.config_image.size() << " bytes");
      CHECK(plan.config_image.size() > 1000);
      CHECK(plan.passes >= 1);
      CHECK(plan.passes < 40);
      CHECK(plan.metrics == default_counter_metrics(p));
    }
    // One cheap counter fits one pass.
    CHECK(plan_counters(chip, {"gpu__time_duration.sum"}).passes == 1);
  }
  CHECK(default_counter_metrics(Precision::D) != default_counter_metrics(Precision::S));
}

TEST_CASE("an unknown metric fails with the closest valid names") {
  CHECK_THROWS_WITH(plan_counters("GH100", {"dram__bytes_red.sum"}),
                    Catch::Contains("unknown metric 'dram__bytes_red.sum'") &&
                        Catch::Contains("dram__bytes_read"));
  CHECK_THROWS_WITH(plan_counters("GH100", {"dram__bytes_read.summ"}),
                    Catch::Contains("no submetric '.summ'") && Catch::Contains(".sum"));
  CHECK_THROWS_WITH(plan_counters("GH100", {"dram__bytes_read"}),
                    Catch::Contains("needs a submetric"));
  CHECK_THROWS_WITH(plan_counters("GX999", {"dram__bytes_read.sum"}), Catch::Contains("GX999"));
  CHECK_THROWS_AS(plan_counters("GH100", {}), InputError);
}
