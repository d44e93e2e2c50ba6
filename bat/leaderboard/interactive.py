"""Interactive figures of a leaderboard site: convergence curves with their bands and ECDFs, drawn by Plotly.

Plotly's browser bundle ships inside the ``plotly`` Python package (MIT; the
``analysis`` extra); ``bundle`` reads it from the installed package and the
site carries a copy (``assets/plotly.min.js``), so a page opens from disk
offline. A figure's input is inlined in its page (a JSON script element: a
page opened from ``file://`` may not fetch files) beside a ``div.plot`` that
names it; ``PLOTS_JS`` loads the bundle and draws a figure once the page has
loaded and the figure comes near the viewport (an ``IntersectionObserver``:
the page's load never waits for Plotly, and a figure never seen is never
drawn), every figure before printing, and redraws them when the reader's
colour scheme changes. Keyboard: a figure takes the focus (Tab); the left and
right arrows move the read-out along the evaluations, Home and End jump to
the ends.
"""

from __future__ import annotations

import json
from html import escape
from importlib import resources
from typing import Any

from bat.core.errors import MissingDependencyError

#: where the site keeps Plotly's bundle
BUNDLE = "assets/plotly.min.js"

PLOTS_JS = r"""(function () {
  "use strict";
  var palette = ["#0072b2", "#d55e00", "#009e73", "#cc79a7", "#56b4e9", "#e69f00", "#7f7f7f", "#8c564b"];
  var plots = Array.prototype.slice.call(document.querySelectorAll("div.plot"));
  var bundle = document.currentScript.src.replace(/plots\.js$/, "plotly.min.js"), loading = null;
  var titles = {convergence: "best known / best found so far", ecdf: "share of (run, fixed target) reached"};
  function rgba(hex, alpha) {
    var n = parseInt(hex.slice(1), 16);
    return "rgba(" + (n >> 16) + "," + ((n >> 8) & 255) + "," + (n & 255) + "," + alpha + ")";
  }
  function colours() {
    var style = getComputedStyle(document.body);
    return {text: style.color, grid: style.getPropertyValue("--line").trim() || "#888888"};
  }
  function traces(data) {
    var out = [];
    Object.keys(data.curves).forEach(function (label, k) {
      var c = data.curves[label], colour = palette[k % palette.length];
      var convergence = data.kind === "convergence", y = convergence ? c.median : c.share;
      var x = y.map(function (_, i) { return i + 1; });
      if (convergence) {
        out.push({x: x, y: c.q3, mode: "lines", line: {width: 0, color: colour}, hoverinfo: "skip",
                  showlegend: false, legendgroup: label});
        out.push({x: x, y: c.q1, mode: "lines", line: {width: 0, color: colour}, fill: "tonexty",
                  fillcolor: rgba(colour, 0.2), hoverinfo: "skip", showlegend: false, legendgroup: label});
      }
      out.push({x: x, y: y, mode: "lines", legendgroup: label, line: {color: colour, width: 2,
                shape: convergence ? "linear" : "hv"},
                name: label + " (" + (convergence ? c.runs + " runs" : c.pairs + " pairs") + ")"});
    });
    return out;
  }
  function layout(data) {
    var c = colours(), axis = {gridcolor: c.grid, zerolinecolor: c.grid, linecolor: c.grid};
    return {paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)", font: {color: c.text},
            hovermode: "x unified", hoverlabel: {namelength: -1}, margin: {t: 10, r: 10},
            height: 420 + 22 * Math.ceil(data.count / 3),
            legend: {font: {color: c.text}, orientation: "h", y: -0.18, yanchor: "top"},
            xaxis: Object.assign({title: {text: "evaluations"}}, axis),
            yaxis: Object.assign({title: {text: titles[data.kind]}, range: [0, 1.05]}, axis)};
  }
  function library() {  // Plotly's bundle, loaded once, when the first figure is drawn
    if (!loading) {
      loading = new Promise(function (resolve, reject) {
        var script = document.createElement("script");
        script.src = bundle; script.onload = resolve; script.onerror = reject;
        document.head.appendChild(script);
      });
    }
    return loading;
  }
  function draw(el) {
    if (!el.drawn) {
      el.drawn = library().then(function () {
        var data = JSON.parse(document.getElementById(el.getAttribute("data-input")).textContent);
        data.count = Object.keys(data.curves).length;
        return Plotly.newPlot(el, traces(data), layout(data), {displaylogo: false, responsive: true});
      });
    }
    return el.drawn;
  }
  function keys(el) {
    var at = 0;
    el.addEventListener("keydown", function (ev) {
      var last = Number(el.getAttribute("data-evaluations"));
      var moves = {ArrowRight: at + 1, ArrowLeft: at - 1, Home: 1, End: last};
      if (!(ev.key in moves)) { return; }
      ev.preventDefault();
      at = Math.min(Math.max(moves[ev.key], 1), last);
      var x = at;
      draw(el).then(function () { Plotly.Fx.hover(el, {xval: x}); });
    });
  }
  window.batDrawAll = function () { return Promise.all(plots.map(draw)); };
  window.addEventListener("beforeprint", window.batDrawAll);
  plots.forEach(keys);
  window.addEventListener("load", function () {  // the page is whole first; figures follow as they are seen
    if (!("IntersectionObserver" in window)) { window.batDrawAll(); return; }
    var near = new IntersectionObserver(function (entries) {
      entries.forEach(function (e) { if (e.isIntersecting) { near.unobserve(e.target); draw(e.target); } });
    }, {rootMargin: "300px"});
    plots.forEach(function (el) { near.observe(el); });
  });
  window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", function () {
    var c = colours(), update = {"font.color": c.text, "legend.font.color": c.text};
    ["xaxis", "yaxis"].forEach(function (a) {
      update[a + ".gridcolor"] = c.grid; update[a + ".zerolinecolor"] = c.grid; update[a + ".linecolor"] = c.grid;
    });
    plots.forEach(function (el) { if (el.drawn) { el.drawn.then(function () { Plotly.relayout(el, update); }); } });
  });
})();
"""


def bundle() -> bytes:
    """Plotly's browser bundle, from the installed ``plotly`` package (MissingDependencyError without it)."""
    try:
        return resources.files("plotly").joinpath("package_data", "plotly.min.js").read_bytes()
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise MissingDependencyError("bat leaderboard draws its interactive figures with Plotly's bundle, from "
                                     "the plotly package (the 'analysis' extra: pip install "
                                     "'bat-autotune[analysis]')") from exc


def plot(name: str, data: dict[str, Any], alt: str, up: str) -> str:
    """The HTML of one interactive figure: its inlined input, the element it is drawn in, and the input's file."""
    inline = json.dumps(data, sort_keys=True, separators=(",", ":")).replace("</", "<\\/")
    longest = max((len(c.get("median") or c.get("share") or []) for c in data["curves"].values()), default=0)
    return (f'<figure><script type="application/json" id="input-{name}">{inline}</script>'
            f'<div class="plot" data-input="input-{name}" data-evaluations="{longest}" tabindex="0" role="img" '
            f'aria-label="{escape(alt)}: interactive; left and right arrows read the values"></div>'
            f'<figcaption class="muted">Drawn from <a href="{up}figures/{name}.json">figures/{name}.json</a> '
            "(Plotly, shipped with the site).</figcaption></figure>")


def scripts(up: str) -> str:
    """The script element a page of interactive figures ends with (it loads Plotly's bundle when needed)."""
    return f'<script src="{up}assets/plots.js"></script>'
