"""The pages of a leaderboard site, drawn from its standings: HTML, a style sheet and a table-sorting script.

``render`` maps each derived file's path in the site to its text: the
standings (``standings.json``), the input of every figure
(``figures/*.json``), the pages (``index.html``, ``benchmark/``, ``gpu/``,
``budget/``, ``target/``, ``tuner/``) and ``assets/``. It is deterministic: the same
standings give the same bytes, which is how ``--verify`` checks that the
pages show the stored results. No page loads anything from the network;
every link is relative, so the site opens from disk. Tables sort by a click
or Enter on a column's button (``aria-sort`` says the order); colours follow
the reader's light or dark preference. A target's convergence curves and
ECDF are interactive (``bat.leaderboard.interactive``), its scores and the
rankings' figures static SVG. A transfer study gets its own page
(``transfer/``): per split a ranking of its own, every tuner marked with
whether it was given a prior.
"""

from __future__ import annotations

import hashlib
import json
import re
from html import escape
from typing import Any

from bat.leaderboard import interactive
from bat.leaderboard.sources import AXES

CSS = """:root { color-scheme: light dark; --bg: #ffffff; --fg: #1b1b1b; --muted: #5a5a5a; --line: #d0d0d0;
  --head: #f1f3f5; --link: #0b57d0; }
@media (prefers-color-scheme: dark) { :root { --bg: #121417; --fg: #e6e6e6; --muted: #a8a8a8; --line: #3a3f45;
  --head: #1d2126; --link: #8ab4f8; } }
body { background: var(--bg); color: var(--fg); font: 15px/1.45 system-ui, sans-serif; margin: 0 auto;
  max-width: 70rem; padding: 1rem 1.5rem; }
a { color: var(--link); } a:focus, button:focus { outline: 2px solid var(--link); outline-offset: 2px; }
nav { display: flex; flex-wrap: wrap; gap: 1rem; border-bottom: 1px solid var(--line); padding-bottom: .5rem; }
table { border-collapse: collapse; margin: .5rem 0 1.5rem; }
th, td { border: 1px solid var(--line); padding: .25rem .6rem; text-align: left; vertical-align: top; }
th { background: var(--head); } td.num { font-variant-numeric: tabular-nums; text-align: right; }
th button { all: unset; cursor: pointer; font-weight: 600; }
th[aria-sort="ascending"] button::after { content: " \\25B2"; }
th[aria-sort="descending"] button::after { content: " \\25BC"; }
.muted { color: var(--muted); } figure { margin: 1rem 0; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; } dd { margin: 0; }
dt { color: var(--muted); }
figure img { max-width: 100%; background: #ffffff; border-radius: 4px; }
div.plot { min-height: 24rem; } div.plot:focus { outline: 2px solid var(--link); outline-offset: 2px; }
"""

# Sort a table by the column whose button was pressed: numbers by value (data-sort), text otherwise.
SORT_JS = """document.querySelectorAll("table.sortable th button").forEach(function (button) {
  button.addEventListener("click", function () {
    var th = button.parentElement, table = th.closest("table"), body = table.tBodies[0];
    var col = Array.prototype.indexOf.call(th.parentElement.children, th);
    var order = th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
    table.querySelectorAll("th").forEach(function (other) { other.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", order);
    var key = function (row) {
      var cell = row.children[col], v = cell.getAttribute("data-sort");
      return v === null ? cell.textContent.trim() : (v === "" ? NaN : parseFloat(v));
    };
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a), y = key(b), c;
      if (typeof x === "number" && typeof y === "number") {
        if (isNaN(x) || isNaN(y)) { return isNaN(x) - isNaN(y); }
        c = x - y;
      } else { c = String(x).localeCompare(String(y)); }
      return order === "ascending" ? c : -c;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  });
});
"""

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


def slug(text: str) -> str:
    """A file name for ``text`` (a tuner label, a target): its safe characters and a short digest of it all."""
    return (_UNSAFE.sub("-", text).strip("-")[:60] or "x") + "-" + hashlib.sha256(text.encode()).hexdigest()[:8]


def interval(s: dict[str, Any]) -> str:
    """A score and its interval, ``~`` marking the normal approximation."""
    if s.get("score") is None:
        return "-"
    if s.get("ci_low") is None or s.get("ci_high") is None:
        return f"{s['score']:+.3f}"
    mark = "~" if s.get("interval") == "normal" else ""
    return f"{s['score']:+.3f} {mark}[{s['ci_low']:+.3f}, {s['ci_high']:+.3f}]"


def _num(value: Any) -> str:
    return "" if value is None or value == "" else repr(float(value))


def _table(header: list[str], rows: list[list[tuple[str, Any]]]) -> str:
    """A sortable table; a cell is (its HTML, its numeric sort key or None for text)."""
    head = "".join(f'<th scope="col"><button type="button">{escape(h)}</button></th>' for h in header)
    body = "".join("<tr>" + "".join(f'<td class="num" data-sort="{_num(key)}">{html}</td>' if key is not None
                                    or html == "-" else f"<td>{html}</td>" for html, key in row) + "</tr>"
                   for row in rows)
    return f'<table class="sortable"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _score_cell(s: dict[str, Any]) -> tuple[str, Any]:
    return escape(interval(s)), s.get("score") if s.get("score") is not None else ""


def _page(title: str, body: str, depth: int, plots: bool = False) -> str:
    up = "../" * depth
    nav = " ".join(f'<a href="{up}{href}">{name}</a>' for name, href in
                   (("Ranking", "index.html"), ("Benchmarks", "benchmark/index.html"), ("GPUs", "gpu/index.html"),
                    ("Budgets", "budget/index.html"), ("Targets", "target/index.html"),
                    ("Tuners", "tuner/index.html"), ("Transfer", "transfer/index.html")))
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{escape(title)}: BAT leaderboard</title>"
            f'<link rel="stylesheet" href="{up}assets/site.css"></head>\n'
            f"<body><nav>{nav}</nav><main><h1>{escape(title)}</h1>\n{body}</main>"
            f'<script src="{up}assets/sort.js"></script>{interactive.scripts(up) if plots else ""}</body></html>\n')


def _ranking_table(rows: list[dict[str, Any]], up: str, count: str = "targets") -> str:
    """Ranks, tuner and both scores; the last column counts the targets of a group, or a target's runs."""
    return _table(["rank", "tuner", "score on evaluations [95 % CI]", "score on time [95 % CI]", "rank on time",
                   count],
                  [[(str(r["rank"]), r["rank"]),
                    (f'<a href="{up}tuner/{slug(r["tuner"])}.html">{escape(r["tuner"])}</a>', None),
                    _score_cell(r["evaluations"]), _score_cell(r["time"]), (str(r["rank_time"]), r["rank_time"]),
                    (str(r["evaluations"].get(count)), r["evaluations"].get(count) or "")] for r in rows])


def _figure(name: str, alt: str, up: str) -> str:
    return (f'<figure><img src="{up}figures/{name}.svg" alt="{escape(alt)}">'
            f'<figcaption class="muted">Drawn from <a href="{up}figures/{name}.json">figures/{name}.json</a>.'
            "</figcaption></figure>")


def figure_input(title: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """What a score figure draws: each tuner's score and interval on both axes, in the ranking's order."""
    return {"kind": "scores", "title": title,
            "rows": [{"tuner": r["tuner"], **{a: {k: r[a][k] for k in ("score", "ci_low", "ci_high")} for a in AXES}}
                     for r in rows]}


def curves_input(kind: str, title: str, curves: dict[str, Any]) -> dict[str, Any]:
    """What a convergence figure (per tuner the median relative performance per evaluation and its band) or an
    ECDF figure (per tuner the share of (run, fixed target) pairs reached per evaluation) draws."""
    return {"kind": kind, "title": title, "curves": curves}


_NOTE = ("<p>The methodology score (Willemsen et al., FGCS 2024): 0 = random search, 1 = the optimum in every run; "
         "one axis counts evaluations, the other simulated tuning time. A group of targets scores a tuner by the "
         "mean of its target scores; the interval is the results folder's own bootstrap interval where one folder "
         "holds them all, else (marked ~) a normal approximation from each target's interval.</p>")


def _group_pages(kind: str, title: str, groups: dict[str, list[dict[str, Any]]], targets: dict[str, Any],
                 files: dict[str, str]) -> None:
    field = "benchmark" if kind == "benchmark" else "gpu"
    items = []
    for name, rows in groups.items():
        members = sorted(t for t, v in targets.items() if v[field] == name)
        links = ", ".join(f'<a href="../target/{slug(t)}.html">{escape(t)}</a>' for t in members)
        files[f"{kind}/{slug(name)}.html"] = _page(f"{title} {name}", f"<p>Targets: {links}.</p>{_NOTE}"
                                                   + _ranking_table(rows, "../"), 1)
        items.append(f'<li><a href="{slug(name)}.html">{escape(name)}</a> ({len(members)} targets)</li>')
    files[f"{kind}/index.html"] = _page(f"{title}s", f"<ul>{''.join(items)}</ul>", 1)


def _fact(value: Any) -> str:
    if value is None or value == "":
        return "not recorded"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _budget_pages(budgets: dict[str, list[dict[str, Any]]], files: dict[str, str]) -> None:
    note = ("<p>At this budget, over the targets each tuner ran: the mean of its score against random search "
            "((mean relative performance - random search's exact expectation) / (1 - that expectation): 0 = random "
            "search, 1 = the optimum in every run) and the mean of its median relative performance (best known / "
            "best found).</p>")
    items = []
    for budget, rows in budgets.items():
        table = _table(["rank", "tuner", "score against random search", "median relative performance", "targets"],
                       [[(str(r["rank"]), r["rank"]),
                         (f'<a href="../tuner/{slug(r["tuner"])}.html">{escape(r["tuner"])}</a>', None),
                         (_fact(r["score"]) if r["score"] is None else f"{r['score']:+.3f}", r["score"] or ""),
                         (_fact(r["median"]) if r["median"] is None else f"{r['median']:.3f}", r["median"] or ""),
                         (str(r["targets"]), r["targets"])] for r in rows])
        files[f"budget/{budget}.html"] = _page(f"Budget {budget} evaluations", note + table, 1)
        items.append(f'<li><a href="{budget}.html">{budget} evaluations</a></li>')
    files["budget/index.html"] = _page("Budgets", f"<ul>{''.join(items)}</ul>", 1)


def _facts(facts: list[tuple[str, Any]]) -> str:
    """A list of named facts; a float to 4 significant digits, a missing one said so."""
    return "<dl>" + "".join(f"<dt>{escape(k)}</dt><dd>{escape(_fact(v))}</dd>" for k, v in facts) + "</dl>"


def _target_page(name: str, t: dict[str, Any]) -> str:
    noise, checks = t.get("noise_aware_optimum") or {}, t.get("data_checks") or {}
    findings = "".join(f"<li>{escape(str(f))}</li>" for f in checks.get("findings") or [])
    facts = [("results folder", t["source"]), ("backend", t.get("backend")), ("repeats per cell", t["repeats"]),
             ("budgets (evaluations)", ", ".join(map(str, t["budgets"]))),
             ("score window: evaluations", t.get("evaluation_window")),
             ("score window: simulated seconds", t.get("time_window_s")),
             ("simulated time", t.get("simulated_time")),
             ("best recorded time (ms)", noise.get("best_ms")),
             ("noise-aware optimum: configurations", noise.get("size")),
             ("data checks", "flagged" if checks.get("flagged") else "nothing flagged")]
    ds, recorded = t["dataset"], t.get("recorded_dataset")
    data = ([("dataset", ds.get("dataset")), ("file sha256", ds.get("sha256")), ("GPU", ds.get("gpu_name")),
             ("driver", ds.get("driver")), ("toolkit", ds.get("toolkit")), ("measured", ds.get("date")),
             ("source", ds.get("source")), ("licence", ds.get("licence"))] if ds.get("found")
            else [("dataset", f"not found when the site was built: {ds.get('why')}")])
    if recorded:  # bat compare --sealed: the file its runs replayed, and its digest
        data = [("dataset the runs recorded (sealed)", recorded["file"]),
                ("its sha256, recorded by the runs", recorded["sha256"]), *data]
    body = ("<h2>Data</h2>" + _facts(data + facts) + (f"<ul>{findings}</ul>" if findings else "")
            + "<h2>Methodology score</h2>" + _ranking_table(t["scores"], "../", "runs")
            + _figure(slug(name), name, "../"))
    budgets = sorted({c["budget"] for c in t["budget_cells"]})
    labels = [r["tuner"] for r in t["scores"]]
    cell = {(c["label"], c["budget"]): c for c in t["budget_cells"]}
    success = {(s["label"], s["budget"]): s for s in t["success"]}

    def median(label: str, b: int) -> tuple[str, Any]:
        c = cell.get((label, b))
        if c is None or c.get("median") is None:
            return "-", ""
        if c.get("q1") is None or c.get("q3") is None:
            return f"{c['median']:.3f}", c["median"]
        return f"{c['median']:.3f} [{c['q1']:.3f}, {c['q3']:.3f}]", c["median"]

    def rate(label: str, b: int) -> tuple[str, Any]:
        s = success.get((label, b))
        return ("-", "") if s is None else (f"{s['successes']}/{s['runs']}", s["successes"] / max(s["runs"], 1))

    if t["convergence"]:
        body += ("<h2>Convergence: best found so far, median and interquartile band</h2>"
                 + interactive.plot(f"{slug(name)}-convergence", curves_input("convergence", name, t["convergence"]),
                                    f"convergence on {name}", "../"))
    if t["ecdf"]:
        body += ("<h2>Fixed targets: share of (run, target) pairs reached (1.5 to 1.01 x the optimum, and the "
                 "noise-aware optimum)</h2>" + interactive.plot(f"{slug(name)}-ecdf", curves_input("ecdf", name,
                                                                                                   t["ecdf"]),
                                                                f"ECDF on {name}", "../"))
    body += ("<h2>Per budget: relative performance, median [Q1, Q3]</h2>"
             + _table(["tuner", *map(str, budgets)], [[(escape(lab), None), *(median(lab, b) for b in budgets)]
                                                      for lab in labels])
             + "<h2>Per budget: runs that reached the noise-aware optimum</h2>"
             + _table(["tuner", *map(str, budgets)], [[(escape(lab), None), *(rate(lab, b) for b in budgets)]
                                                      for lab in labels]))
    return _page(f"Target {name}", body, 1, plots=bool(t["convergence"] or t["ecdf"]))


def _tuner_page(label: str, t: dict[str, Any]) -> str:
    def sealed(field: str) -> str | None:
        """One recorded fact per results folder, as the folders list them; None when no folder is sealed."""
        if not any(t["sealed"]):
            return None
        return ", ".join(_fact(None if c is None else c[field]) for c in t["sealed"])

    library = next((c["library"] for c in t["sealed"] if c and c["library"]), None)
    facts = [("tuner", t["spec"]), ("declared options", json.dumps(t["options"])),
             ("results folders", ", ".join(t["sources"])),
             ("isolated (own sandboxed process)", ", ".join("yes" if i else "no" for i in t["isolated"])),
             ("code digest (sha256 of its modules' source, bat compare --sealed)", sealed("code_digest")),
             (f"{library} version" if library else "library version", sealed("library_version")),
             ("BAT version of the runs", sealed("bat_version"))]
    rows = [[(f'<a href="../target/{slug(r["target"])}.html">{escape(r["target"])}</a>', None),
             _score_cell(r["evaluations"]), _score_cell(r["time"]),
             (str(r["evaluations"].get("runs")), r["evaluations"].get("runs") or "")] for r in t["targets"]]
    table = _table(["target", "score on evaluations [95 % CI]", "score on time [95 % CI]", "runs"], rows)
    return _page(f"Tuner {label}", _facts(facts) + table, 1)


_TRANSFER_NOTE = ("<p>A transfer study (<code>bat compare --study transfer</code>) tunes each GPU in turn (the "
                  "held-out target) with the other GPUs' measured data of the same space as the tuner's prior "
                  "(per split: all other GPUs, or one vendor's). A tuner given a prior is not ranked with the "
                  "campaigns' tuners, which had none: each split has its own ranking by the methodology score over "
                  "its held-out targets, with the study's bootstrap interval. The floor, random search, runs "
                  "without a prior.</p>")


def _goal_cell(g: dict[str, Any] | None, budget: int) -> tuple[str, Any]:
    """Median evaluations to a goal with its interval; ``>B`` where censored at the budget B."""
    if g is None:
        return "-", ""

    def shown(v: Any) -> str:
        return "-" if v is None else (f">{budget}" if v > budget else f"{v:g}")

    text = shown(g["median"]) + (f" [{shown(g['ci_low'])}, {shown(g['ci_high'])}]" if g["ci_low"] is not None
                                 else "")
    return escape(text + (f" ({g['censored']}/{g['runs']} censored)" if g["censored"] else "")), g["median"]


def _gain_cell(g: dict[str, Any] | None, budget: int) -> tuple[str, Any]:
    """Random search's exact median over the tuner's (above 1: the prior helped; ``<``: an upper bound, the
    tuner's median censored at the budget)."""
    if g is None or g["gain"] is None:
        return "-", ""
    return ("&lt;" if g["median"] > budget else "") + f"{g['gain']:.2f}x", g["gain"]


def _transfer_page(study: dict[str, Any]) -> str:
    prior = {t["label"]: t["prior"] for t in study["tuners"]}
    given = {True: "yes", False: "no (the floor)"}
    facts = [("results folder", study["source"]), ("results.json sha256", study["sha256"]),
             ("budget (evaluations)", study["budget"]), ("repeats (seeds) per cell", study["repeats"]),
             ("floor (no prior)", study["floor"] or None), ("censoring", study["censoring"]),
             ("tuners", ", ".join(f"{t['label']} ({t['spec']}, prior: {given[t['prior']]})"
                                  for t in study["tuners"]))]
    body = _TRANSFER_NOTE + _facts(facts)
    budget = study["budget"]
    for split in study["splits"]:
        body += (f"<h2>Prior: {escape(split['name'])}</h2>"
                 + _table(["rank", "tuner", "prior given", "score on evaluations [95 % CI]",
                           "score on time [95 % CI]", "rank on time", "targets"],
                          [[(str(r["rank"]), r["rank"]), (escape(r["tuner"]), None),
                            (given[prior.get(r["tuner"], True)], None), _score_cell(r["evaluations"]),
                            _score_cell(r["time"]), (str(r["rank_time"]), r["rank_time"]),
                            (str(r["evaluations"]["targets"]), r["evaluations"]["targets"])]
                           for r in split["ranking"]]))
        for t in split["targets"]:
            goals = {lab: {g["goal"]: g for g in rows} for lab, rows in t["goals"].items()}
            randoms = {g["goal"]: g["random_exact_median"] for rows in t["goals"].values() for g in rows}
            exact = ", ".join(f"{goal:.2f}: {_fact(randoms.get(goal))}" for goal in study["goals"])
            body += (f"<h3>Held out: {escape(t['target'])} (prior: "
                     f"{escape(', '.join(t['sources']) or 'none')})</h3>"
                     f"<p class=\"muted\">Random search's exact median evaluations to each goal: {escape(exact)}.</p>"
                     + _table(["tuner", "prior given", "score on evaluations [95 % CI]", "score on time [95 % CI]",
                               "runs", *(f"evaluations to {g:.2f} x optimum" for g in study["goals"]),
                               *(f"gain at {g:.2f}" for g in study["goals"])],
                              [[(escape(r["tuner"]), None), (given[prior.get(r["tuner"], True)], None),
                                _score_cell(r["evaluations"]), _score_cell(r["time"]),
                                (str(r["evaluations"].get("runs")), r["evaluations"].get("runs") or ""),
                                *(_goal_cell(goals.get(r["tuner"], {}).get(g), budget) for g in study["goals"]),
                                *(_gain_cell(goals.get(r["tuner"], {}).get(g), budget) for g in study["goals"])]
                               for r in t["scores"]]))
    return _page(f"Transfer study {study['source']}", body, 1)


def _study_items(studies: list[dict[str, Any]], folder: str) -> str:
    """A list of the transfer studies' pages (in ``folder``, relative to the linking page), each with its tuners."""
    return "".join(f'<li><a href="{folder}{k}-{slug(study["source"])}.html">{escape(study["source"])}</a>: '
                   + escape(", ".join(t["label"] for t in study["tuners"])) + "</li>"
                   for k, study in enumerate(studies, start=1))


def _transfer_pages(studies: list[dict[str, Any]], files: dict[str, str]) -> None:
    for k, study in enumerate(studies, start=1):
        files[f"transfer/{k}-{slug(study['source'])}.html"] = _transfer_page(study)
    files["transfer/index.html"] = _page("Transfer studies", _TRANSFER_NOTE + (
        f"<ul>{_study_items(studies, '')}</ul>" if studies else "<p>No transfer study among this site's "
                                                                   "inputs.</p>"), 1)


def render(standings: dict[str, Any]) -> dict[str, str]:
    """Every derived file of the site (path -> text); the figures' SVG are drawn from ``figures/*.json``."""
    files: dict[str, str] = {"assets/site.css": CSS, "assets/sort.js": SORT_JS, "assets/plots.js": interactive.PLOTS_JS,
                             "standings.json": json.dumps(standings, indent=1, sort_keys=True) + "\n"}
    figures = {"overall": figure_input("All targets", standings["overall"])}
    figures.update({slug(name): figure_input(name, t["scores"]) for name, t in standings["targets"].items()})
    for kind in ("convergence", "ecdf"):
        figures.update({f"{slug(name)}-{kind}": curves_input(kind, name, t[kind])
                        for name, t in standings["targets"].items() if t[kind]})
    for name, data in figures.items():
        files[f"figures/{name}.json"] = json.dumps(data, indent=1, sort_keys=True) + "\n"
    sources = "".join(f"<li>{escape(s['name'])}: results.json sha256 <code>{s['sha256']}</code></li>"
                      for s in standings["sources"])
    files["index.html"] = _page("Tuner ranking", _NOTE + _ranking_table(standings["overall"], "")
                                + _figure("overall", "scores with 95 % intervals, all targets", "")
                                + f"<h2>Built from</h2><ul>{sources}</ul>"
                                + '<p>Check it: <code>bat leaderboard --verify SITE</code>.</p>', 0)
    _group_pages("benchmark", "Benchmark", standings["benchmarks"], standings["targets"], files)
    _group_pages("gpu", "GPU", standings["gpus"], standings["targets"], files)
    _budget_pages(standings["budgets"], files)
    for name, t in standings["targets"].items():
        files[f"target/{slug(name)}.html"] = _target_page(name, t)
    files["target/index.html"] = _page("Targets", "<ul>" + "".join(
        f'<li><a href="{slug(n)}.html">{escape(n)}</a></li>' for n in standings["targets"]) + "</ul>", 1)
    for label, t in standings["tuners"].items():
        files[f"tuner/{slug(label)}.html"] = _tuner_page(label, t)
    studies = standings.get("transfer", [])
    files["tuner/index.html"] = _page("Tuners", "<ul>" + "".join(
        f'<li><a href="{slug(n)}.html">{escape(n)}</a></li>' for n in standings["tuners"]) + "</ul>" + (
        "<h2>Tuners of the transfer studies (given a prior, ranked on their own pages)</h2>"
        f"<ul>{_study_items(studies, '../transfer/')}</ul>" if studies else ""), 1)
    _transfer_pages(studies, files)
    return files
