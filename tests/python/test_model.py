"""predict, space, source and devices from Python: the command's records, keyword options, and
ValueError with the C++ message for bad input."""

import json
import os
import subprocess

import pytest

import gemmtune

# The compact domain keeps each ranking short on a small CI machine.
SMALL = dict(gpu="H100-SXM", precision="d", m=512, n=384, k=256, domain="compact")


def test_predict_returns_the_commands_records_best_first():
    rows = gemmtune.predict(top=5, calibration="none", **SMALL)
    assert [r["rank"] for r in rows] == [1, 2, 3, 4, 5]
    times = [r["time_us"] for r in rows]
    assert times == sorted(times)
    for key in ("config", "time_us", "gflops", "occupancy", "limit", "why"):
        assert key in rows[0]


def test_predict_agrees_with_the_command_line(tmp_path):
    command = os.path.join(os.path.dirname(gemmtune.__file__), "gemmtune")
    out = subprocess.run([command, "predict", "--gpu", "H100-SXM", "--precision", "d", "--m",
                          "512", "--n", "384", "--k", "256", "--top", "5", "--calibration",
                          "none", "--domain", "compact", "--format", "json"], capture_output=True, text=True,
                         check=True).stdout
    cli = [r["config"] for r in json.loads(out)["top"]]
    assert [r["config"] for r in gemmtune.predict(top=5, calibration="none", **SMALL)] == cli


def test_predict_shortlist_keeps_one_configuration_per_tile_family_first():
    rows = gemmtune.predict(top=4, shortlist=True, calibration="none", **SMALL)
    families = {tuple(r["config"].split("_")[:5]) for r in rows}
    assert len(families) == 4


def test_predict_compiled_shortlist_reranks_the_first_n_with_compiled_registers(tmp_path):
    plain = gemmtune.predict(top=4, calibration="none", **SMALL)
    rows = gemmtune.predict(top=4, compiled_shortlist=4, cache=str(tmp_path), calibration="none",
                            **SMALL)
    assert len(rows) == 4
    assert {r["config"] for r in rows} <= {r["config"] for r in plain} | {
        r["config"] for r in gemmtune.predict(top=8, calibration="none", **SMALL)}
    times = [r["time_us"] for r in rows]
    assert times == sorted(times)
    assert any(tmp_path.iterdir())  # the cubins went to the cache given
    with pytest.raises(ValueError, match="--compiled-shortlist = -1"):
        gemmtune.predict(compiled_shortlist=-1, **SMALL)


def test_bad_problem_raises_value_error_naming_it():
    with pytest.raises(ValueError, match="M = 0"):
        gemmtune.predict(m=0, n=1, k=1)
    with pytest.raises(ValueError, match="precision 'q'"):
        gemmtune.predict(precision="q", m=8, n=8, k=8)
    with pytest.raises(ValueError, match="no-such-gpu"):
        gemmtune.predict(gpu="no-such-gpu", m=8, n=8, k=8)


def test_space_funnel_shrinks_stage_by_stage_and_lists_survivors():
    funnel = gemmtune.space(list=True, **SMALL)
    remaining = [s["remaining"] for s in funnel["stages"]]
    assert funnel["raw"] >= remaining[0]
    assert remaining == sorted(remaining, reverse=True)
    assert len(funnel["configs"]) == remaining[-1]


def test_space_disable_keeps_more():
    stage = gemmtune.space(**SMALL)["stages"][-1]["stage"]
    assert gemmtune.space(disable=[stage], **SMALL)["stages"][-1]["remaining"] >= \
        gemmtune.space(**SMALL)["stages"][-1]["remaining"]
    with pytest.raises(ValueError):
        gemmtune.space(disable=["no_such_stage"], **SMALL)


def test_source_renders_a_configuration_and_refuses_a_broken_one():
    config = gemmtune.predict(top=1, calibration="none", **SMALL)[0]["config"]
    text = gemmtune.source(config, precision="d", m=512, n=384, k=256)
    assert config in text and "__global__" in text
    broken = config.replace("BK", "BK999", 1)
    with pytest.raises(ValueError):
        gemmtune.source(broken)


def test_devices_lists_the_built_in_specs_with_peaks():
    specs = {d["name"]: d for d in gemmtune.devices()}
    assert "H100-SXM" in specs
    assert specs["H100-SXM"]["sm_count"] == 132
    assert specs["H100-SXM"]["peak_gflops"]["s"] > 10000
