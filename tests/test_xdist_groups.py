"""The suite's ``xdist_group`` marks hold under ``--dist loadgroup`` (the README's test command).

pytest-xdist keeps a group on one worker by suffixing each grouped test's id with ``@group`` in the worker; a
pytest whose ids that assignment no longer reaches (9.2 with xdist 3.8) ran each group's tests on both workers,
so the NVRTC sample (tests/test_kernels_compile.py) was compiled twice. pyproject.toml pins pytest below it.

A test file that names no group is one (tests/conftest.py): its mark must be there before xdist's hook reads it.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from xdist.remote import WorkerInteractor

pytest_plugins = ["pytester"]

SOURCE = """
import pytest

pytestmark = pytest.mark.xdist_group("shared")

def test_one():
    pass

@pytest.mark.xdist_group("other")
def test_two():
    pass
"""


def test_xdist_suffixes_a_grouped_tests_id_with_its_group(pytester: pytest.Pytester) -> None:
    items = pytester.getitems(SOURCE)
    config = SimpleNamespace(getvalue=lambda name: name == "loadgroup")
    WorkerInteractor.pytest_collection_modifyitems(None, config, items)  # type: ignore[arg-type]
    assert [item.nodeid.rpartition("::")[2] for item in items] == ["test_one@shared", "test_two@other_shared"]


def test_a_file_that_names_no_group_is_a_group_of_its_own(request: pytest.FixtureRequest) -> None:
    # tests/conftest.py marks it before pytest-xdist suffixes the ids (with --dist loadgroup, in a worker)
    assert [m.args[0] for m in request.node.iter_markers("xdist_group")] == ["test_xdist_groups"]
    if getattr(request.config.option, "loadgroup", False):
        assert request.node.nodeid.endswith("@test_xdist_groups")
