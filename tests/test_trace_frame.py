"""A trace's frame is built through Arrow (bat.core.trace.records_frame): the same frame pandas infers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from bat.core.trace import records_frame, values_of

COLUMNS = {
    "ints": [1, 2, 3], "int_none": [1, None, 3], "int_float": [1, 2.5, 3], "float_nan": [1.0, math.nan, 2.0],
    "float_none": [1.0, None, 2.0], "bool": [True, False, True], "bool_none": [True, None, False],
    "str": ["a", "b", "c"], "str_none": ["a", None, "c"], "none": [None, None, None],
    "numpy": [np.int64(1), np.int64(2), 3], "np_float": [np.float32(1.5), 2.0, np.float64(1.0)],
    "np_bool": [np.bool_(True), False, True], "int_nan": [1, math.nan, 2],
}
#: columns Arrow does not take as plain values: left to pandas
LEFT = {"bool_int": [True, 1, 0], "big": [2**63, 1, 2], "tuple": [(1, 2), (3, 4), (5, 6)], "str_int": ["a", 1, 2],
        "str_nan": ["a", math.nan, "b"]}


def _same(rows: list[tuple], columns: list[str], *, written: bool = True) -> None:
    """The same frame, and (``written``: what a trace file can hold) the same table written."""
    want, got = pd.DataFrame.from_records(rows, columns=columns), records_frame(rows, columns, arrow_from=1)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert got.dtypes.tolist() == want.dtypes.tolist() and got.to_csv() == want.to_csv()
    if written:
        assert pa.Table.from_pandas(got, preserve_index=False).equals(pa.Table.from_pandas(want, preserve_index=False))


@pytest.mark.parametrize("name", [*COLUMNS, *LEFT])
def test_each_kind_of_column_as_pandas_infers_it(name: str) -> None:
    values = {**COLUMNS, **LEFT}[name]
    _same([(v, i) for i, v in enumerate(values)], [name, "step"], written=name in COLUMNS)


def test_all_columns_together_empty_and_repeated_names() -> None:
    names = list(COLUMNS)
    _same(list(zip(*COLUMNS.values(), strict=True)), names)
    _same([], names)
    _same([(1, 2.0), (3, 4.0)], ["x", "x"], written=False)


@pytest.mark.parametrize("parameters", [(), ("x",), ("y", "x"), ("x", "y", "z")])
def test_a_configurations_values_in_the_parameters_order(parameters: tuple[str, ...]) -> None:
    """``values_of``: a tuple whatever the number of parameters (an itemgetter of one gives the value alone)."""
    config = {"z": 3, "x": 1, "y": 2}
    assert values_of(parameters)(config) == tuple(config[p] for p in parameters)
    with pytest.raises(KeyError):
        values_of((*parameters, "w"))(config)
