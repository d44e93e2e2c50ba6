"""Exception types of BAT: one root, each subclass also a matching built-in."""

import difflib


class BatError(Exception):
    """Root of every error BAT raises on purpose; the CLI prints it as one line."""


class SpaceSpecError(BatError, ValueError):
    """A malformed search-space file or expression (names the file and JSON path)."""


class UnknownNameError(BatError, LookupError):
    """An unknown tuner, benchmark, dataset or GPU (the message lists valid names)."""

    def __init__(self, kind: str, name: str, valid: list[str] | tuple[str, ...]) -> None:
        self.kind, self.name, self.valid = kind, name, list(valid)
        listing = ", ".join(self.valid) if self.valid else "(none)"
        close = difflib.get_close_matches(str(name), self.valid, n=3, cutoff=0.6)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        super().__init__(f"unknown {kind} {name!r}{hint}; valid: {listing}")

    def __str__(self) -> str:  # LookupError would otherwise quote the message
        return str(self.args[0])


class DatasetError(BatError, ValueError):
    """A dataset that cannot be read, written or used as asked."""


class SpaceMismatchError(DatasetError):
    """A dataset whose parameters, values or space hash do not match its space."""


class BackendError(BatError, RuntimeError):
    """A backend that cannot work at all (not a failed configuration: that is data)."""


class KernelRunError(BatError, RuntimeError):
    """A configuration that failed while it ran (a sanitizer report, a misused barrier, a deadlock).

    Data, not a broken backend: the backend records it as the configuration's status.
    """


class OrderDependenceError(KernelRunError):
    """Outputs that differ when the blocks of a launch (and their threads) run in another order."""


class RunTimeoutError(KernelRunError):
    """A run on a GPU that did not finish within its time limit."""


class BudgetExhaustedError(BatError, RuntimeError):
    """Evaluating after the budget is spent (a tuner bug: tuners check problem.exhausted)."""


class ProblemClosedError(BatError, RuntimeError):
    """A proposal after the tuner's ``tune()`` returned: the run is over, nothing reaches the backend."""


class TunerError(BatError, RuntimeError):
    """A tuner that cannot run on the problem it was given."""


class MissingDependencyError(BatError, ImportError):
    """An optional library (a tuner, CatBoost, Dask) that is not installed."""


class ConvergenceError(BatError, RuntimeError):
    """An iterative analysis (PageRank) that did not converge within its iteration limit."""


class RegistryError(BatError, LookupError):
    """An entry point that cannot be loaded or is not what its group expects."""


class ProtocolError(BatError, ValueError):
    """A protocol message that cannot be served (bat.protocol): ``code`` and the ``field`` at fault."""

    def __init__(self, code: str, message: str, field: str | None = None) -> None:
        self.code, self.field = code, field
        super().__init__(f"{field}: {message}" if field else message)
        self.detail = message


class UnsafeNameError(BatError, ValueError):
    """A name that cannot become part of a file name, or a write into the installed package."""


class OutputError(BatError, OSError):
    """An output path that cannot be written, or exists and may not be replaced (says how to proceed)."""

    def __str__(self) -> str:  # OSError would otherwise format errno and filename
        return str(self.args[0])


class FolderInUseError(BatError, RuntimeError):
    """An output folder locked by another running process (the message names it)."""


class RunInterrupted(KeyboardInterrupt):
    """A journalled run was interrupted (Ctrl-C, SIGTERM): the message names the journal that resumes it."""


class InputLimitError(BatError, ValueError):
    """An input over one of the stated limits of bat.core.limits (size, depth, digits), or not a regular file."""
