"""The fuzzer of issue 32 in CI: every input format, a bounded number of examples each (tests/fuzz_harness.py
states the property). bench/fuzz_bench.py runs the same formats at 100,000 examples; every failure either
finds is kept in tests/fuzz_regressions.py."""

from __future__ import annotations

import pytest
from fuzz_harness import formats

#: examples per format in CI: a few hundred each (the in-process harness runs them in about 50 s of CPU time on the
#: 2-core box; `bat run`/`bat compare` command lines cost more, some run a whole comparison)
EXAMPLES = {"space": 300, "t1": 200, "kerneltuner": 300, "kerneltuner-gz": 200, "t4": 300, "ktt": 300,
            "dataset-metadata": 300, "trace-metadata": 300, "baseline": 300, "protocol": 300, "options": 60}
FORMATS = {f.name: f for f in formats()}


def test_every_format_is_fuzzed() -> None:
    assert set(EXAMPLES) == set(FORMATS)


@pytest.mark.parametrize("name", list(FORMATS))
def test_a_fuzzed_input_is_accepted_correctly_or_refused_in_one_line(name: str) -> None:
    FORMATS[name].fuzz(EXAMPLES[name])
