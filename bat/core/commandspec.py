"""The "command" section of a space file: compile/run/verify templates and how to read the time.

A command benchmark is defined by files alone: its space file says how to
compile a configuration (a template such as ``cc -O2 -DTILE={TILE} ...``),
how to run it, how to read the objective (a regular expression with one
capture group and a unit, or the wall time of the run), optionally how to
verify its output, how often to repeat the run and the time limit of each
step. Everything is checked here, when the benchmark is loaded: an unknown
placeholder, a malformed regular expression or a bad limit raises
SpaceSpecError naming the file and the JSON path.

Templates are split into argument lists with ``shlex`` *before* anything is
substituted and are run without a shell, so a substituted value is always one
argument (or part of one) and can never be read as shell syntax. Placeholders
are ``{NAME}`` for a parameter, a problem-size key or a constant, and
``{dir}`` for the benchmark's directory; ``{{`` and ``}}`` are literal braces.
The template language is this small on purpose: ``string.Formatter`` would
accept attribute and index lookups, which a benchmark file has no business
making.

Threat model (docs/RELIABILITY.md): a space file with a command section is
code, like a Makefile: whoever writes it writes the commands BAT runs, with
the rights of the user running BAT; use only space files you trust. What
BAT guarantees is that a *value* is never re-read as code: a parameter value,
a size or the benchmark's folder (which may hold spaces or ``$``) reaches a
program as exactly the text it is. So a placeholder may not appear inside
an inline script: the script of a shell (``sh``, ``bash``, ``zsh``, ... and
``su``/``runuser``) given with any ``-c`` form (``-c``, ``-ec``, ``-lc``,
``-c -e``, ``-o pipefail -c``), reached directly or through any wrapper
(``env``, ``nice``, ``timeout``, ``setsid``, ``busybox sh``: every argument
is looked at, not only the first), the code of ``python -c``, ``perl -e``,
``ruby -e`` or ``node -e``, or ``env -S`` (which splits its argument into
words again). Pass the value as an argument instead:
``sh -c 'prog "$1"' sh {X}``. A program named by a placeholder cannot be
checked and is the space file's author's business.

Values are allow-listed, not programs deny-listed: a list of interpreters
will always miss one (``awk``, ``gdb -ex``, ``flock -c``...), so every value
substituted into a template (a parameter value, a problem size, a constant)
must match ``SAFE_VALUE``: letters, digits and ``_ . , + -``, which is code
in no language a program could read it as. This is checked for every value
of the space when the benchmark is loaded and again for every value when a
command is built. A parameter the section lists under ``free_text`` may hold
any text, and reaches a program only as a whole argument at a position the
section declares as data (``"data": {"run": [2]}``); anywhere else it is
refused when the benchmark is loaded, whatever the program (the model and
its limits: docs/RELIABILITY.md); the interpreter check above remains as a
second line. ``{dir}`` is a path
chosen by whoever runs BAT, not a value of the space, and is not
allow-listed.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bat.core.errors import SpaceSpecError

if TYPE_CHECKING:
    import regex

#: Placeholder naming the benchmark's directory (where its sources lie).
DIR_PLACEHOLDER = "dir"
#: Milliseconds per unit of a regex-read objective.
UNITS_MS: dict[str, float] = {"s": 1e3, "ms": 1.0, "us": 1e-3, "ns": 1e-6}
#: Seconds the objective regex may spend on one run's output (a pattern that backtracks catastrophically,
#: ``^(a+)+$``, would otherwise take minutes on a short line); the ``regex`` engine checks the limit.
REGEX_TIMEOUT_S = 1.0
#: Time limits (seconds) of the steps that a section does not set.
DEFAULT_LIMITS_S: dict[str, float] = {"compile": 120.0, "run": 60.0, "verify": 60.0}
DEFAULT_REPEATS = 3

_KEYS = ("compile", "run", "verify", "objective", "repeats", "time_limit_s", "free_text", "data")
#: A value substituted into a command (see the module docstring); the whole text must match.
SAFE_VALUE = re.compile(r"[A-Za-z0-9_.,+-]*")
_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")


@dataclass(frozen=True)
class Template:
    """A command as a list of arguments, each a sequence of literal text and placeholder names."""

    text: str
    argv: tuple[tuple[tuple[bool, str], ...], ...]  # per argument: (is_placeholder, text) parts

    @property
    def names(self) -> frozenset[str]:
        return frozenset(part for arg in self.argv for is_name, part in arg if is_name)

    @property
    def program(self) -> str | None:
        """The program run (first argument) when it holds no placeholder."""
        first = self.argv[0]
        return None if any(is_name for is_name, _ in first) else "".join(p for _, p in first)

    def render(self, values: Mapping[str, str], free_text: frozenset[str] = frozenset()) -> list[str]:
        """The argument list with every placeholder replaced by its value (never re-split); a value outside
        SAFE_VALUE (except ``{dir}`` and the ``free_text`` names) raises SpaceSpecError."""
        for name in self.names - free_text - {DIR_PLACEHOLDER}:
            check_value(name, values[name], self.text)
        return ["".join(values[p] if is_name else p for is_name, p in arg) for arg in self.argv]


def value_text(value: Any) -> str:
    """A value as substituted into a command (NumPy scalars as their Python value)."""
    return str(value.item() if hasattr(value, "item") else value)


def check_value(name: str, text: str, where: str) -> None:
    """``text``, the value of placeholder ``{name}``, is within SAFE_VALUE (SpaceSpecError otherwise)."""
    if not SAFE_VALUE.fullmatch(text):
        raise SpaceSpecError(
            f"{where}: value {text[:60]!r} of {{{name}}} has characters outside letters, digits and '_.,+-', "
            "so it could be read as code; list the parameter under command.free_text to allow any text "
            "(docs/RELIABILITY.md states the risk)")


@dataclass(frozen=True)
class Objective:
    """How to read the time of one run: a regex capture (in ``unit``) or the run's wall time."""

    pattern: regex.Pattern[str] | None  # None: wall time of the run command
    unit: str = "ms"

    @property
    def is_wall(self) -> bool:
        return self.pattern is None

    def describe(self) -> str:
        if self.pattern is None:
            return "wall time of the run"
        return f"/{self.pattern.pattern}/ in {self.unit}"

    def read_ms(self, output: str) -> float:
        """The time in ms from a run's standard output (last match wins); ValueError if none."""
        assert self.pattern is not None, "wall-time objectives are measured, not read"
        try:
            matches = [m.group(1) or "" for m in self.pattern.finditer(output, timeout=REGEX_TIMEOUT_S)]
        except TimeoutError:
            raise ValueError(f"objective regex /{self.pattern.pattern}/ took over {REGEX_TIMEOUT_S:g} s on "
                             f"{len(output)} characters of output (it backtracks); write a simpler one") from None
        if not matches:
            raise ValueError(f"no match for objective regex /{self.pattern.pattern}/ in the output")
        text = matches[-1]
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"objective regex captured {text!r}, not a number") from None
        if not value >= 0 or value == float("inf"):
            raise ValueError(f"objective regex captured {text!r}, not a finite time >= 0")
        return value * UNITS_MS[self.unit]


@dataclass(frozen=True)
class CommandSpec:
    """A parsed, validated "command" section."""

    compile: Template | None
    run: Template
    verify: Template | None
    objective: Objective
    repeats: int
    limits_s: Mapping[str, float]
    free_text: frozenset[str] = frozenset()

    def templates(self) -> dict[str, str]:
        """The template texts, for provenance."""
        out = {"run": self.run.text}
        if self.compile is not None:
            out["compile"] = self.compile.text
        if self.verify is not None:
            out["verify"] = self.verify.text
        return out


def parse_template(text: Any, known: frozenset[str], where: str) -> Template:
    """Split ``text`` into arguments and check every placeholder names something in ``known``."""
    if not isinstance(text, str) or not text.strip():
        raise SpaceSpecError(f"{where}: expected a non-empty command string")
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise SpaceSpecError(f"{where}: cannot split the command: {exc}") from None
    argv = tuple(_parse_word(word, known, where) for word in words)
    _reject_shell_script_placeholders(argv, where)
    return Template(text, argv)


def _parse_word(word: str, known: frozenset[str], where: str) -> tuple[tuple[bool, str], ...]:
    parts: list[tuple[bool, str]] = []
    pos = 0
    for m in _TOKEN.finditer(word):
        if m.start() > pos:
            parts.append((False, word[pos:m.start()]))
        token = m.group(0)
        if token in ("{{", "}}"):
            parts.append((False, token[0]))
        elif m.group(1) is None:
            raise SpaceSpecError(f"{where}: unbalanced {token!r} in {word!r}; write {token * 2} "
                                 "for a literal brace")
        elif m.group(1) not in known:
            raise SpaceSpecError(f"{where}: unknown placeholder {token} (not a parameter, "
                                 f"problem-size key, constant or {{{DIR_PLACEHOLDER}}}); "
                                 f"known: {', '.join(sorted(known))}")
        else:
            parts.append((True, m.group(1)))
        pos = m.end()
    if pos < len(word):
        parts.append((False, word[pos:]))
    return tuple(parts)


def _reject_shell_script_placeholders(argv: tuple[tuple[tuple[bool, str], ...], ...],
                                      where: str) -> None:
    """No placeholder inside the inline script of an interpreter or ``env -S`` (see the module docstring)."""
    for i, word in enumerate(argv):
        text = _literal(word)
        if text is None:
            continue
        name = re.sub(r"[\d.]+$", "", os.path.basename(text))  # python3.11 -> python, bash5 -> bash
        if name == "env":
            script = _split_string_argument(argv, i + 1)
        elif name in _SHELLS:
            script = _shell_script(argv, i + 1)
        elif name in _INTERPRETERS:
            flags, values, permute = _INTERPRETERS[name]
            script = _code_argument(argv, i + 1, flags, values, permute=permute)
        else:
            continue
        if script is not None and any(is_name for is_name, _ in argv[script]):
            shown = " ".join(shlex.quote(_show(w)) for w in argv[i:script + 1])
            raise SpaceSpecError(
                f"{where}: a placeholder inside the script of `{shown}` would be parsed as code, not passed "
                "as a value; pass it as an argument instead: sh -c 'prog \"$1\"' sh {NAME}")


_Word = tuple[tuple[bool, str], ...]
#: shells: the first operand after a -c form is the script
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "csh", "tcsh", "fish"})
#: shell options whose value is the next argument (also a cluster ending in o or O: -eo pipefail)
_SHELL_VALUE_OPTIONS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
#: programs with an option whose value is code: name -> (short flags, options taking a value, options
#: may follow operands)
_INTERPRETERS: dict[str, tuple[frozenset[str], frozenset[str], bool]] = {
    "su": (frozenset("c"), frozenset({"-s", "--shell", "-g", "--group", "-G", "--supp-group"}), True),
    "runuser": (frozenset("c"), frozenset({"-s", "--shell", "-g", "--group", "-G", "--supp-group", "-u",
                                            "--user"}), True),
    "python": (frozenset("c"), frozenset({"-W", "-X"}), False),
    "perl": (frozenset("eE"), frozenset(), False),
    "ruby": (frozenset("e"), frozenset(), False),
    "node": (frozenset("ep"), frozenset({"-r", "--require", "--import"}), False),
}
_LONG_CODE = ("--command", "--eval", "--print")


def _literal(word: _Word) -> str | None:
    """The text of an argument without placeholders (None if it has one)."""
    return None if any(is_name for is_name, _ in word) else "".join(p for _, p in word)


def _text(word: _Word) -> str:
    return "".join(p for _, p in word)


def _show(word: _Word) -> str:
    return "".join(f"{{{p}}}" if is_name else p for is_name, p in word)


def _shell_script(argv: tuple[_Word, ...], start: int) -> int | None:
    """Index of the script a shell runs with a -c form, None if it runs none."""
    with_c, k = False, start
    while k < len(argv):
        text = _text(argv[k])
        if text == "--":
            return k + 1 if with_c and k + 1 < len(argv) else None
        if text in _SHELL_VALUE_OPTIONS:
            k += 2
            continue
        if len(text) > 1 and text[0] in "-+" and not text.startswith("--"):
            with_c = with_c or "c" in text[1:]
            k += 2 if text[-1] in "oO" else 1  # -eo pipefail: the value follows
            continue
        if not text.startswith("--"):  # the first operand: the script after a -c form
            return k if with_c else None
        k += 1
    return None


def _code_argument(argv: tuple[_Word, ...], start: int, flags: frozenset[str], values: frozenset[str], *,
                   permute: bool) -> int | None:
    """Index of the argument holding the code of ``python -c``, ``su -c``, ``perl -e``... (None if none)."""
    k = start
    while k < len(argv):
        text = _text(argv[k])
        if text == "--":
            return None
        if text.startswith(_LONG_CODE):
            return k if "=" in text else (k + 1 if k + 1 < len(argv) else None)
        if text in values:
            k += 2
            continue
        if len(text) > 1 and text[0] == "-" and not text.startswith("--"):
            hit = next((j for j, ch in enumerate(text[1:], 1) if ch in flags), None)
            if hit is not None:  # -c CODE, or the code attached: -cCODE
                return k if hit < len(text) - 1 else (k + 1 if k + 1 < len(argv) else None)
        elif not text.startswith("-") and not permute:
            return None  # a script file: its own arguments follow
        k += 1
    return None


def _split_string_argument(argv: tuple[_Word, ...], start: int) -> int | None:
    """Index of the argument ``env -S`` / ``--split-string`` splits into words again."""
    for k in range(start, len(argv)):
        text = _text(argv[k])
        if text in ("-S", "--split-string"):
            return k + 1 if k + 1 < len(argv) else None
        if text.startswith(("-S", "--split-string=")):
            return k
        if not text.startswith("-") and "=" not in text:
            return None  # the program env runs: looked at on its own
    return None


def parse_command_section(raw: Any, known: frozenset[str] | set[str], source: str,
                          values: Mapping[str, Iterable[Any]] | None = None) -> CommandSpec:
    """Validate the "command" section ``raw`` of space file ``source``.

    ``known`` holds the names a template may use besides ``dir``: the
    parameters, problem-size keys and constants; ``values`` the values each
    of them may take, every one checked against SAFE_VALUE unless its name is
    listed under ``free_text``.
    """
    where = f"{source}: command"
    if not isinstance(raw, dict) or not raw:
        raise SpaceSpecError(f"{where}: expected an object with at least a 'run' command")
    if extra := sorted(set(raw) - set(_KEYS)):
        raise SpaceSpecError(f"{where}.{extra[0]}: unknown key; allowed: {', '.join(_KEYS)}")
    if "run" not in raw:
        raise SpaceSpecError(f"{where}: missing key 'run'")
    if DIR_PLACEHOLDER in known:
        raise SpaceSpecError(f"{where}: a parameter or size named {DIR_PLACEHOLDER!r} would hide "
                             f"the {{{DIR_PLACEHOLDER}}} placeholder; rename it")
    names = frozenset(known) | {DIR_PLACEHOLDER}

    def template(key: str) -> Template | None:
        return parse_template(raw[key], names, f"{where}.{key}") if key in raw else None

    run = template("run")
    assert run is not None
    free = _parse_free_text(raw.get("free_text", []), frozenset(known), f"{where}.free_text")
    _check_data_positions(raw.get("data", {}), {k: template(k) for k in ("compile", "run", "verify")}, free,
                          f"{where}.data")
    used = frozenset().union(*(t.names for t in (run, template("compile"), template("verify")) if t))
    for name in sorted(used - free - {DIR_PLACEHOLDER}):
        for value in (values or {}).get(name, ()):
            check_value(name, value_text(value), f"{source}: {name}")
    return CommandSpec(
        compile=template("compile"), run=run, verify=template("verify"),
        objective=_parse_objective(raw.get("objective", "wall"), f"{where}.objective"),
        repeats=_parse_repeats(raw.get("repeats", DEFAULT_REPEATS), f"{where}.repeats"),
        limits_s=_parse_limits(raw.get("time_limit_s", {}), f"{where}.time_limit_s"),
        free_text=free,
    )


def _parse_free_text(raw: Any, known: frozenset[str], where: str) -> frozenset[str]:
    if not isinstance(raw, list) or not all(isinstance(n, str) for n in raw):
        raise SpaceSpecError(f"{where}: expected a list of parameter names")
    if unknown := sorted(set(raw) - known):
        raise SpaceSpecError(f"{where}: {unknown[0]!r} is not a parameter, problem-size key or constant")
    return frozenset(raw)


def _check_data_positions(raw: Any, templates: Mapping[str, Template | None], free: frozenset[str],
                          where: str) -> None:
    """A ``free_text`` value reaches a program only as a whole argument, at a position the section declares as
    data (``"data": {"run": [2]}``: argument 2 of the run command, the program being 0); any other use of it,
    a declared position that holds no free-text placeholder, or a step without a template, is refused."""
    if not isinstance(raw, dict):
        raise SpaceSpecError(f"{where}: expected an object of argument positions per step, e.g. {{\"run\": [2]}}")
    for step, positions in raw.items():
        if templates.get(step) is None:
            raise SpaceSpecError(f"{where}.{step}: no {step} command to declare positions of")
        if not isinstance(positions, list) or not all(isinstance(i, int) and not isinstance(i, bool)
                                                      for i in positions):
            raise SpaceSpecError(f"{where}.{step}: expected a list of argument positions (integers)")
    for step, template in templates.items():
        if template is None:
            continue
        declared = set(raw.get(step, []))
        if stray := sorted(declared - set(range(len(template.argv)))):
            raise SpaceSpecError(f"{where}.{step}: position {stray[0]} is past the last argument of "
                                 f"`{template.text}`")
        for i, word in enumerate(template.argv):
            names = {part for is_name, part in word if is_name} & free
            whole = len(word) == 1 and word[0][0] and word[0][1] in free
            if i in declared and (i == 0 or not whole):
                raise SpaceSpecError(f"{where}.{step}: argument {i} ({_show(word)!r}) is not a free-text "
                                     "placeholder standing alone; only such an argument (never the program) is data")
            if names and not (whole and i in declared):
                name = sorted(names)[0]
                raise SpaceSpecError(
                    f"{where}.{step}: the free-text value {{{name}}} is in argument {i} ({_show(word)!r}) of "
                    f"`{template.text}`, which the section does not declare as data; a free-text value reaches a "
                    f"program only as a whole argument at a declared position: \"data\": {{\"{step}\": [{i}]}}, "
                    "and only where that program reads the argument as data, never as code")


def _parse_objective(raw: Any, where: str) -> Objective:
    if raw == "wall":
        return Objective(None)
    if not isinstance(raw, dict) or set(raw) - {"regex", "unit"} or "regex" not in raw:
        raise SpaceSpecError(f"{where}: expected \"wall\" or an object "
                             "{\"regex\": ..., \"unit\": \"s|ms|us|ns\"}")
    unit = raw.get("unit", "ms")
    if unit not in UNITS_MS:
        raise SpaceSpecError(f"{where}.unit: {unit!r} is not one of {', '.join(UNITS_MS)}")
    if not isinstance(raw["regex"], str):
        raise SpaceSpecError(f"{where}.regex: expected a string")
    import regex  # a time limit per search (the standard re has none); only a command benchmark needs it

    try:
        pattern = regex.compile(raw["regex"])
    except regex.error as exc:
        raise SpaceSpecError(f"{where}.regex: not a regular expression: {exc}") from None
    if pattern.groups != 1:
        raise SpaceSpecError(f"{where}.regex: needs exactly one capture group, has {pattern.groups}")
    return Objective(pattern, unit)


def _parse_repeats(raw: Any, where: str) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
        raise SpaceSpecError(f"{where}: expected an integer >= 1, got {raw!r}")
    return raw


def _parse_limits(raw: Any, where: str) -> dict[str, float]:
    if not isinstance(raw, dict):
        raise SpaceSpecError(f"{where}: expected an object of seconds per step")
    limits = dict(DEFAULT_LIMITS_S)
    for step, value in raw.items():
        if step not in DEFAULT_LIMITS_S:
            raise SpaceSpecError(f"{where}.{step}: unknown step; steps: {', '.join(DEFAULT_LIMITS_S)}")
        if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
            raise SpaceSpecError(f"{where}.{step}: expected seconds > 0, got {value!r}")
        limits[step] = float(value)
    return limits
