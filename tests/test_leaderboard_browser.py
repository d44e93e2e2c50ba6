"""The leaderboard site in a real browser (Debian's headless Chromium), opened from disk (issue 40).

Each kind of page (ranking, benchmark, GPU, target, tuner, budget, transfer study) is loaded from a
copy of the site with a probe script added at its end: after the load it
reports every image's drawn width and the ranking's tuner order before and
after a click on a column's button. Chromium logs the page's console on
stderr: a page must log nothing (a probe that logs an error shows that it
would be seen). A screenshot of the ranking must not be blank. In light and
dark (Blink's preferred colour scheme) text and links keep their contrast
(WCAG 2: 7 for text, 4.5 for links). Skipped
without Chromium, except in CI (``CI`` set), where ``.ci/run`` installs it.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from bat.cli import EXIT_OK, main
from bat.leaderboard.pages import slug

CHROMIUM = shutil.which("chromium")
pytestmark = [
    pytest.mark.skipif(CHROMIUM is None and not os.environ.get("CI"),
                       reason="chromium is not installed (.ci/run installs Debian's chromium package)"),
    pytest.mark.xdist_group("leaderboard"),
]

PROBE = """<script>
window.addEventListener("load", function () {
  var names = function () {
    return Array.prototype.map.call(document.querySelectorAll("main table.sortable:first-of-type tbody tr"),
                                    function (row) { return row.children[1].textContent; });
  };
  var out = {images: Array.prototype.map.call(document.images, function (i) { return i.naturalWidth; }),
             before: names()};
  var button = document.querySelectorAll("main table.sortable:first-of-type th button")[2];
  if (button) { button.click(); }
  out.after = names();
  %s
  Promise.resolve(window.batDrawAll ? window.batDrawAll() : null).then(function () {
    out.plots = Array.prototype.map.call(document.querySelectorAll("div.plot"), function (el) {
      var svg = el.querySelector("svg.main-svg");
      return {width: svg ? svg.getBoundingClientRect().width : 0,
              lines: el.querySelectorAll(".scatterlayer path.js-line").length};
    });
    document.body.setAttribute("data-probe", JSON.stringify(out));
  });
});
</script></body>"""


def _chromium(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CHROMIUM or "chromium", "--headless", "--no-sandbox", "--disable-gpu",
                           "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000", *args],
                          capture_output=True, text=True, timeout=120, check=True)


def _probe(page: Path, extra: str = "") -> tuple[dict, list[str]]:
    """The probe's report of ``page`` (its copy gets the probe) and the console lines Chromium logged."""
    page.write_text(page.read_text().replace("</body>", PROBE % extra))
    proc = _chromium("--dump-dom", page.resolve().as_uri())
    found = re.search(r'data-probe="([^"]*)"', proc.stdout)
    assert found, f"{page.name}: the probe did not run"
    return json.loads(html.unescape(found.group(1))), [line for line in proc.stderr.splitlines()
                                                        if ":CONSOLE" in line]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from test_leaderboard import FIRST, GENETIC, RANDOM, _run

    root = tmp_path_factory.mktemp("browser")
    a = _run(root / "a", (RANDOM, FIRST), (("pnpoly", "RTX_3090"),))
    b = _run(root / "b", (RANDOM, GENETIC), (("convolution", "RTX_3090"),))
    study = root / "study"  # a transfer study: the transfer pages
    assert main(["compare", "--study", "transfer", "-t", "transfer:best,reference:random", "-b", "convolution_milo",
                 "--budgets", "6", "-r", "2", "--no-plots", "-o", str(study)]) == EXIT_OK
    assert main(["leaderboard", str(a), str(b), str(study), "--out", str(root / "site"), "--key",
                 str(root / "key.pem")]) == EXIT_OK
    return root / "site"


def test_every_kind_of_page_loads_without_a_console_line_and_draws_its_figures(site: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(site, copy)
    standings = json.loads((site / "standings.json").read_text())
    pages = ["index.html", f"benchmark/{slug('pnpoly')}.html", f"gpu/{slug('RTX_3090')}.html",
             f"target/{slug('pnpoly/RTX_3090')}.html", f"tuner/{slug('reference:random')}.html", "budget/8.html"]
    reports = {}
    for name in pages:
        reports[name], console = _probe(copy / name)
        assert console == [], f"{name}: {console}"
        images = reports[name]["images"]
        assert all(width > 0 for width in images), f"{name}: a figure not drawn: {images}"
    target = reports[pages[3]]
    assert len(target["images"]) == 1 and len(target["plots"]) == 2  # its scores; convergence curves and ECDF
    tuners = len(standings["targets"]["pnpoly/RTX_3090"]["scores"])
    # drawn by Plotly from the site's own copy: per tuner its median (and the band's edges) and its ECDF
    assert all(p["width"] > 0 for p in target["plots"]) and [p["lines"] for p in target["plots"]] == [3 * tuners,
                                                                                                      tuners]
    assert all(r["plots"] == [] for name, r in reports.items() if name != pages[3])
    index = reports["index.html"]
    ranking = [r["tuner"] for r in standings["overall"]]
    assert index["before"] == ranking and len(index["images"]) == 1
    by_score = sorted(standings["overall"], key=lambda r: r["evaluations"]["score"])
    assert index["after"] == [r["tuner"] for r in by_score]  # one click: ascending by the score on evaluations


def test_the_transfer_pages_load_without_a_console_line_and_name_every_tuner(site: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(site, copy)
    (study,) = json.loads((site / "standings.json").read_text())["transfer"]
    page = f"transfer/1-{slug(study['source'])}.html"
    for name in ("transfer/index.html", page):
        report, console = _probe(copy / name)
        assert console == [], f"{name}: {console}"
    # the first split's ranking, in its order, every tuner of the study in it; a click sorts it
    ranking = [r["tuner"] for r in study["splits"][0]["ranking"]]
    assert report["before"] == ranking and set(ranking) == {t["label"] for t in study["tuners"]}
    by_score = sorted(study["splits"][0]["ranking"], key=lambda r: r["evaluations"]["score"])
    assert report["after"] == [r["tuner"] for r in by_score]
    shown = _chromium("--dump-dom", (site / page).resolve().as_uri()).stdout
    for t in study["tuners"]:
        assert f"<td>{t['label']}</td>" in shown


def test_a_console_error_is_seen(site: Path, tmp_path: Path) -> None:
    shutil.copytree(site, tmp_path / "copy")
    _, console = _probe(tmp_path / "copy" / "index.html", 'console.error("probe: seen");')
    assert any("probe: seen" in line for line in console)


def test_a_screenshot_of_the_ranking_is_not_blank(site: Path, tmp_path: Path) -> None:
    from matplotlib.image import imread

    shot = tmp_path / "shot.png"
    _chromium(f"--screenshot={shot}", "--window-size=1200,900", (site / "index.html").resolve().as_uri())
    pixels = imread(shot)
    assert pixels.shape[0] == 900 and pixels[..., :3].std() > 0.05
    assert len({tuple(p) for p in pixels[::7, ::7, :3].reshape(-1, 3).round(2)}) > 20  # text and a figure


def _luminance(css: str) -> float:
    """The relative luminance (WCAG 2) of a CSS ``rgb(r, g, b)`` colour."""
    channels = [int(v) / 255 for v in re.findall(r"\d+", css)[:3]]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def _contrast(a: str, b: str) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_text_and_links_are_readable_in_light_and_dark(site: Path, tmp_path: Path, scheme: str) -> None:
    shutil.copytree(site, tmp_path / "copy")
    page = tmp_path / "copy" / "index.html"
    page.write_text(page.read_text().replace("</body>", """<script>
window.addEventListener("load", function () {
  var style = function (el) { return getComputedStyle(el); };
  document.body.setAttribute("data-colours", JSON.stringify({background: style(document.body).backgroundColor,
    text: style(document.body).color, link: style(document.querySelector("main a")).color,
    head: style(document.querySelector("th")).backgroundColor}));
});
</script></body>"""))
    # Blink's preferred colour scheme: 0 is dark, 1 is light
    proc = _chromium(f"--blink-settings=preferredColorScheme={0 if scheme == 'dark' else 1}", "--dump-dom",
                     page.resolve().as_uri())
    colours = json.loads(html.unescape(re.search(r'data-colours="([^"]*)"', proc.stdout).group(1)))
    assert (_luminance(colours["background"]) < 0.1) == (scheme == "dark")
    assert _contrast(colours["text"], colours["background"]) >= 7  # WCAG AAA for body text
    assert _contrast(colours["link"], colours["background"]) >= 4.5
    assert _contrast(colours["text"], colours["head"]) >= 7


def test_an_interactive_figure_reads_its_values_from_the_keyboard(site: Path, tmp_path: Path) -> None:
    shutil.copytree(site, tmp_path / "copy")
    page = tmp_path / "copy" / "target" / f"{slug('pnpoly/RTX_3090')}.html"
    page.write_text(page.read_text().replace("</body>", """<script>
window.addEventListener("load", function () {
  var plot = document.querySelector("div.plot");
  window.batDrawAll().then(function () {
    plot.focus();
    var before = plot.querySelectorAll(".hoverlayer .hoverlabel, .hoverlayer .legend").length;
    ["End", "ArrowLeft"].forEach(function (key) {
      plot.dispatchEvent(new KeyboardEvent("keydown", {key: key, bubbles: true}));
    });
    setTimeout(function () {
      document.body.setAttribute("data-keys", JSON.stringify({focused: document.activeElement === plot,
        before: before, text: plot.querySelector(".hoverlayer").textContent}));
    }, 200);
  });
});
</script></body>"""))
    proc = _chromium("--dump-dom", page.resolve().as_uri())
    found = json.loads(html.unescape(re.search(r'data-keys="([^"]*)"', proc.stdout).group(1)))
    assert found["focused"] and found["before"] == 0
    assert "reference:random" in found["text"]  # the read-out names the tuners at the evaluation reached: 8 - 1
    assert found["text"].startswith("7")
