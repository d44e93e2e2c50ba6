"""Independent jobs of a finished campaign (its figures) on forked processes, while this process does its own.

``run_forked(jobs, processes, meanwhile)`` runs the zero-argument callables
``jobs`` on ``processes`` processes forked from this one and, while they run,
``meanwhile()`` here; it returns both results. The jobs close over large
objects (datasets, traces, the analysis), which a forked child shares with
this process as they are, where a spawned process or a Dask worker would need
them pickled and sent. ``multiprocessing``'s fork context does the process
handling; what is written here is only the hand-over of the closures (a list
the children inherit, indexed by job) and their context (``contextvars``:
the figure formats chosen for this command). Without the fork start method
(not Linux), with another thread running in this process (a terminal's
progress bar), or with one process, everything runs here, in order: the
same results.

The children die with this process (bat.core.lifetime), and an exception
here or in a job stops them at once.
"""

from __future__ import annotations

import contextvars
import multiprocessing
import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from bat.core.lifetime import die_with_parent

T = TypeVar("T")

#: the jobs of the run in progress; a forked child finds them here
_JOBS: list[Callable[[], Any]] = []


def _job(i: int) -> Any:
    return _JOBS[i]()


def fork_is_safe() -> bool:
    """This system forks, and this process runs no other thread (a fork copies only the calling thread, with
    whatever locks the others held)."""
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


def run_forked(jobs: list[Callable[[], Any]], processes: int,
               meanwhile: Callable[[], T]) -> tuple[list[Any], T]:
    """``[job() for job in jobs]`` on up to ``processes`` forked processes, and ``meanwhile()`` here."""
    context = contextvars.copy_context()
    runs = [lambda job=job: context.copy().run(job) for job in jobs]
    if processes <= 1 or len(runs) < 2 or not fork_is_safe():
        here = meanwhile()
        return [run() for run in runs], here
    _JOBS[:] = runs
    pool = multiprocessing.get_context("fork").Pool(min(processes, len(runs)), initializer=die_with_parent,
                                                    initargs=(os.getpid(),))
    try:
        pending = pool.map_async(_job, range(len(runs)), chunksize=1)
        here = meanwhile()
        results = pending.get()
    except BaseException:
        pool.terminate()
        raise
    else:
        pool.close()
    finally:
        pool.join()
        _JOBS.clear()
    return results, here
