"""The output layer of every command: exit codes, escaped one-line messages, ``--json`` documents, progress.

* **Exit codes**, the same for every command: 0 success; 1 an internal error (a bug in BAT) only;
  2 bad input or usage; 3 the command worked and found something (a compare regression, a flagged
  dataset, a configuration that failed verification); 75 ``bat record`` only: run again (with
  ``--resume``) in a fresh process; 130 interrupted.
* **Text from outside is never markup.** ``say`` and ``warn`` take the code's own rich markup as
  the template and every value as an argument; each value is formatted, made one line
  (``one_line``: control characters, line and paragraph separators shown as escapes) and escaped
  for rich, so ``[/]`` in a path or a GPU name prints as written and a newline in a name cannot
  split a message. ``cell`` does the same for a table cell.
* **``--json``** (anywhere on the command line): human output on stdout is silenced and the
  command's ``document`` is printed as one JSON document on stdout at the end, also when the
  command found something (exit 3); on exit 2 or 1 the document is the error
  (``bat/schemas/cli/error.json``). Every command's document has a JSON Schema in
  ``bat/schemas/cli/<command>.json``.
* **Not on a terminal** no line is wrapped (paths and ids stay whole in logs and pipes), and long
  commands print a plain ``progress`` line to stderr at most every ``PROGRESS_EVERY_S`` seconds
  (done/total, elapsed, estimated time left); ``--quiet`` silences it.

rich does the markup and the bars; what it does not do (escaping values of a template, one-line
text, the throttled log line) is the few functions below.
"""

from __future__ import annotations

import math
import re
import string
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.markup import escape

from bat.cli.console import console, err_console

EXIT_OK, EXIT_INTERNAL, EXIT_USAGE, EXIT_FOUND, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
#: ``bat record`` only: the GPU needs a fresh process (a hung kernel, a sticky CUDA error); run again with
#: --resume. sysexits.h's EX_TEMPFAIL, "try again later".
EXIT_RETRY = 75
#: Seconds between two progress lines when stderr is not a terminal.
PROGRESS_EVERY_S = 10.0
#: Characters of an error or warning line at most (what a value from outside adds is cut beyond it).
MAX_MESSAGE_CHARS = 2000
#: Width of the consoles when they are not a terminal: wide enough that no path or id is wrapped.
LOG_WIDTH = 100_000

_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\x1b": "\\x1b", "\u2028": "\\u2028", "\u2029": "\\u2029",
            "\x85": "\\x85", "\x0b": "\\x0b", "\x0c": "\\x0c"}


@dataclass
class Mode:
    """How this command line prints: set once by ``bat.cli.main`` through ``configure``."""

    json: bool = False
    quiet: bool = False
    command: str = ""
    document: dict[str, Any] | None = field(default=None)
    error: str | None = None


mode = Mode()


def configure(*, json_output: bool, quiet: bool, command: str) -> None:
    """Set the mode of this command line and the consoles to match it (called again for every command line)."""
    global mode
    mode = Mode(json=json_output, quiet=quiet, command=command)
    for c in (console, err_console):
        c.soft_wrap = not c.is_terminal
        # None: the terminal's own width again (rich's setter takes it; its annotation says int)
        c.width = None if c.is_terminal else LOG_WIDTH  # type: ignore[assignment]
    console.quiet = json_output


def one_line(text: object) -> str:
    """``text`` as one line: every control character, line or paragraph separator shown as an escape."""
    s = str(text)
    if s.isprintable():
        return s
    return "".join(_ESCAPES.get(ch) or (ch if ch.isprintable() or ch == " " else f"\\x{ord(ch):02x}"
                                        if ord(ch) < 256 else f"\\u{ord(ch):04x}") for ch in s)


def cell(value: object) -> str:
    """A value from outside as a table cell: one line, no markup."""
    return escape(one_line(value))


class Markup(str):
    """Text that ``markup`` made: safe markup, put into another template as it is."""


class _Escaping(string.Formatter):
    """str.format where each value is formatted, then made one line and escaped (the template is not).

    rich shows backslashes as written except right before a tag, where it halves them (an odd one
    escapes the tag): a value's trailing backslashes are doubled only when the template goes on with a
    tag of the code's own, so that they show as written in either place.
    """

    def vformat(self, format_string: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> str:
        out: list[str] = []
        auto = 0
        for literal, field_name, spec, conversion in self.parse(format_string):
            if literal:
                if out and _TAG.match(literal):  # rich halves the backslashes right before a tag
                    out[-1] += "\\" * (len(out[-1]) - len(out[-1].rstrip("\\")))
                out.append(literal)
            if field_name is None:
                continue
            if field_name == "":
                field_name, auto = str(auto), auto + 1
            value, _ = self.get_field(field_name, args, kwargs)
            value = self.convert_field(value, conversion)
            out.append(str(value) if isinstance(value, Markup) else
                       _escape_tags(one_line(format(value, self.vformat(spec or "", args, kwargs)))))
        return "".join(out)


def _escape_tags(text: str) -> str:
    """``text`` as rich shows it literally. rich halves the backslashes right before what reads as a tag
    (``[a-z#/@...]``; an odd one escapes it) and drops one backslash before any other ``[``: k backslashes
    before a tag become 2k + 1, before another bracket k + 1."""
    def one(m: re.Match[str]) -> str:
        k = len(m.group(1))
        if _TAG.match(text, m.end(1)):
            return "\\" * (2 * k + 1) + "["
        return "\\" * (k + 1 if k else 0) + "["

    return re.sub(r"(\\*)\[", one, text)


#: what rich reads as a tag
_TAG = re.compile(r"\[[a-z#/@][^[]*?]")


_formatter = _Escaping()


def markup(template: str, *args: object, **values: object) -> Markup:
    """The code's ``template`` (rich markup, str.format fields) with every value escaped and on one line."""
    return Markup(_formatter.format(template, *args, **values))


def say(template: str, *args: object, **values: object) -> None:
    """Print one human line on stdout (silenced under ``--json``); see ``markup``."""
    console.print(markup(template, *args, **values), highlight=False, soft_wrap=True)


def block(text: str, indent: str = "    ") -> None:
    """Print external text that is several lines by nature (a sanitizer's report) as it is: no markup, indented."""
    console.print("\n".join(indent + one_line(line) for line in str(text).splitlines()), markup=False,
                  highlight=False, soft_wrap=True)


def say_err(template: str, *args: object, **values: object) -> None:
    """Print one line on stderr (``bat serve``, whose stdout may be the protocol); see ``markup``."""
    err_console.print(markup(template, *args, **values), highlight=False, soft_wrap=True)


def warn(template: str, *args: object, **values: object) -> None:
    """Print a warning line on stderr, whatever the mode."""
    err_console.print("[yellow]warning:[/] " + markup(template, *(bounded(str(a)) for a in args),
                                                     **{k: bounded(str(v)) for k, v in values.items()}),
                      highlight=False, soft_wrap=True)


def bounded(text: str, limit: int | None = None) -> str:
    """``text`` cut to ``limit`` characters (default ``MAX_MESSAGE_CHARS``), saying how much was cut: a value
    from outside echoed in a message (a 100,000-character tuner name) never floods a terminal or a log."""
    limit = MAX_MESSAGE_CHARS if limit is None else limit
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text) - limit:,} more characters)"


def error_line(line: str) -> None:
    """The one error line of a failed command on stderr (one line, at most ``MAX_MESSAGE_CHARS``)."""
    err_console.print(f"[bold red]error:[/] {escape(bounded(one_line(line)))}", highlight=False, soft_wrap=True)


def document(data: dict[str, Any]) -> None:
    """The command's result as one JSON document (printed by ``emit`` under ``--json``)."""
    mode.document = data


def mark_quarantined(datasets: list[dict[str, Any]]) -> None:
    """Mark a command's output drawn on datasets with quarantined rows (bat.core.quarantine): a line on stdout
    after it (stderr for ``bat serve``), and ``quarantined`` in its ``--json`` document. Nothing when there are
    none."""
    from bat.cli.console import shown_path

    if not datasets:
        return
    line = say_err if mode.command == "serve" else say  # bat serve's stdout is the protocol's
    for d in datasets:
        line("[bold yellow]quarantined:[/] this output draws on {}, which holds {} quarantined suspect rows "
            "(times no GPU gives or repeats, quarantined at import with --allow-suspect or when read; `bat check` "
            "lists them; excluded from every time shown, column 'suspect')",
            shown_path(Path(d["dataset"])), d["rows"])
    if mode.json:
        mode.document = {**(mode.document or {}), "quarantined": datasets}


def emit(code: int, error: str | None = None) -> None:
    """Under ``--json``: print the command's document, or the error, as one JSON document on stdout."""
    if not mode.json:
        return
    if error is not None or code in (EXIT_INTERNAL, EXIT_USAGE, EXIT_INTERRUPTED):
        doc: dict[str, Any] = {"command": mode.command, "ok": False, "exit_code": code,
                               "error": bounded(one_line(error or ""))}
    else:
        # the envelope's keys are the envelope's: a command's document cannot overwrite them
        doc = {**(mode.document or {}), "command": mode.command, "ok": True, "exit_code": code}
    from bat.core import jsonout  # imported when a document is printed: start-up stays lean

    sys.stdout.write(jsonout.dumps(doc) + "\n")  # finite numbers only: an infinity is null, listed in non_finite
    sys.stdout.flush()


_SAMPLES = 256


@dataclass
class ProgressLog:
    """Plain progress lines for a log: at most one every ``every_s`` seconds, with done/total and time left.

    A command of several phases names each (``update(..., phase=...)``): a new phase is logged at once, and
    its elapsed time and time left count from its own start (an estimate from the phase before would not
    hold: the phases of ``bat analyze`` differ by orders of magnitude per step). Time left comes from how
    the phase has gone so far: the elapsed time is taken to grow as a power of the fraction done, the power
    measured between the half-way point of the elapsed time and now (1 when each step costs the same;
    about 2 for a tuner whose every proposal costs more than the last, as Optuna's TPE and SMAC do).
    """

    label: str
    write: Callable[[str], None]
    every_s: float = PROGRESS_EVERY_S
    clock: Callable[[], float] = time.monotonic
    start: float = field(default=0.0)
    last: float | None = None
    phase: str | None = None
    #: (elapsed s, fraction done) of this phase, thinned to at most ``_SAMPLES``
    seen: list[tuple[float, float]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.start = self.clock()
        self.last = self.start

    def update(self, done: float, total: float | None, phase: str | None = None) -> None:
        now = self.clock()
        if phase != self.phase:
            self.phase, self.start, self.last, self.seen = phase, now, None, []
        elapsed = now - self.start
        if total:
            self.seen.append((elapsed, done / total))
            if len(self.seen) > _SAMPLES:
                self.seen = self.seen[::2]
        if self.last is not None and now - self.last < self.every_s:
            return
        self.last = now
        self.write(progress_line(self.title, done, total, elapsed, self.time_left(elapsed)))

    def time_left(self, elapsed: float) -> float | None:
        """Seconds left, from the power law through the half-way sample and now (None: too early to say)."""
        if not self.seen or not 0 < self.seen[-1][1] < 1:
            return None
        fraction = self.seen[-1][1]
        half = min(self.seen, key=lambda s: abs(s[0] - elapsed / 2))
        power = 1.0
        if 0 < half[1] < fraction and 0 < half[0] < elapsed:
            power = min(max(math.log(elapsed / half[0]) / math.log(fraction / half[1]), 0.5), 3.0)
        return elapsed * (fraction ** -power - 1)

    @property
    def title(self) -> str:
        return self.label if self.phase is None else f"{self.label}, {self.phase}"


def progress_line(label: str, done: float, total: float | None, elapsed_s: float, left_s: float | None = None
                  ) -> str:
    """``label: 12/40 (30%), 25 s elapsed, about 58 s left`` (a fraction when total is 1.0); time left is
    ``left_s`` when given, else the elapsed time's share of what is left."""
    if total in (None, 0):
        return f"{one_line(label)}: {_count(done)} done, {elapsed_s:.0f} s elapsed"
    fraction = min(max(done / total, 0.0), 1.0)
    counted = f"{fraction:.0%}" if total == 1.0 else f"{_count(done)}/{_count(total)} ({fraction:.0%})"
    if left_s is None and fraction > 0:
        left_s = elapsed_s * (1 - fraction) / fraction
    left = f"about {left_s:.0f} s left" if left_s is not None else "time left unknown"
    return f"{one_line(label)}: {counted}, {elapsed_s:.0f} s elapsed, {left}"


def _count(x: float) -> str:
    return f"{x:.0f}" if float(x).is_integer() else f"{x:.2f}"


@contextmanager
def progress(label: str, total: float | None = None) -> Iterator[Callable[..., None]]:
    """Progress of a long command; yields ``update(done, total=None, phase=None)``.

    On a terminal: a transient rich bar on stderr. Else: a ``ProgressLog`` line on stderr at most
    every ``PROGRESS_EVERY_S`` seconds. Nothing under ``--quiet``. A ``phase`` names the step under way;
    a new one restarts the count and the clock of the estimate, and is shown beside ``label``.
    """
    if mode.quiet:
        yield lambda done, total=None, phase=None: None
        return
    if not err_console.is_terminal:
        log = ProgressLog(label, lambda line: err_console.print(line, markup=False, highlight=False,
                                                                soft_wrap=True), every_s=PROGRESS_EVERY_S)
        yield lambda done, new_total=None, phase=None: log.update(done, total if new_total is None else new_total,
                                                                   phase)
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), TimeRemainingColumn(), console=err_console, transient=True) as bar:
        task = bar.add_task(cell(label), total=total)
        shown: list[str | None] = [None]

        def update(done: float, new_total: float | None = None, phase: str | None = None, task=task) -> None:
            if phase != shown[0]:  # a new phase: its own count and clock
                shown[0] = phase
                bar.reset(task, total=new_total if new_total is not None else bar.tasks[0].total,
                          description=cell(label if phase is None else f"{label}, {phase}"))
            bar.update(task, completed=done, total=new_total if new_total is not None else bar.tasks[0].total)

        yield update
