"""The report of a store built from recordings: one HTML page holding every plot."""

import base64
import os
import re
import subprocess
import sys

import pytest

import gemmtune
from conftest import DATA

report = pytest.importorskip("gemmtune.report", reason="the report needs matplotlib")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    db = str(tmp_path_factory.mktemp("report") / "recorded.db")
    gemmtune.import_attempts(os.path.join(DATA, "h100_exhaustive.csv"), db=db)
    gemmtune.import_attempts(os.path.join(DATA, "h100_shortlist_counters.json"), db=db)
    return db


@pytest.fixture(scope="module")
def page(store, tmp_path_factory):
    # Through the command, which runs python -m gemmtune.report with this Python.
    out = tmp_path_factory.mktemp("page") / "report.html"
    command = os.path.join(os.path.dirname(gemmtune.__file__), "gemmtune")
    done = subprocess.run([command, "report", "--db", store, "-o", str(out)],
                          capture_output=True, text=True,
                          env={**os.environ, "GEMMTUNE_PYTHON": sys.executable,
                               "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 0, done.stderr
    return out.read_text()


def test_report_holds_every_plot_as_an_embedded_image(page):
    for plot in report.PLOTS:
        assert f'id="{plot}"' in page
        images = re.findall(rf'data-plot="{plot}"><img alt="[^"]*" '
                            r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
        assert images, f"no image for {plot}"
        assert base64.b64decode(images[0])[:8] == b"\x89PNG\r\n\x1a\n"
    assert "http" not in page.replace("http-equiv", "")  # nothing fetched from elsewhere
    assert "NVIDIA H100 80GB HBM3" in page and "us" in page


def test_each_figure_names_problem_device_date_and_units(page):
    captions = re.findall(r"<figcaption>([^<]*)</figcaption>", page)
    assert captions
    for caption in captions:
        assert "NVIDIA H100 80GB HBM3" in caption
        assert re.search(r"20\d\d-\d\d-\d\d", caption), caption
        assert re.search(r"microseconds|GFLOP/s|ratio", caption), caption


def test_report_of_a_missing_store_fails_with_a_message(tmp_path):
    assert report.main(["--db", str(tmp_path / "none.db"), "-o", str(tmp_path / "r.html")]) == 2


def test_spearman_matches_known_values():
    assert report.spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1)
    assert report.spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1)
    assert report.spearman([1, 2, 3, 4, 5], [2, 1, 4, 3, 5]) == pytest.approx(0.8)
