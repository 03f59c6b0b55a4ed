"""A channel's batch conversion: column by column when it can, row by row otherwise, with one result.

No Spark session: the converter turns Python values into an Arrow table of
the table's columns, and the row-by-row conversion (which names every error)
is the oracle for the column-by-column one.
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pyarrow as pa
from pyspark.sql import types as T

from lakeclone.channels.convert import RowConverter

SCHEMA = T.StructType(
    [
        T.StructField("I", T.IntegerType()),
        T.StructField("L", T.LongType()),
        T.StructField("N", T.DecimalType(10, 2)),
        T.StructField("F", T.DoubleType()),
        T.StructField("R", T.FloatType()),
        T.StructField("B", T.BooleanType()),
        T.StructField("D", T.DateType()),
        T.StructField("NTZ", T.TimestampNTZType()),
        T.StructField("LTZ", T.TimestampType()),
        T.StructField("BIN", T.BinaryType()),
        T.StructField("V", T.VariantType()),
        T.StructField("A", T.ArrayType(T.LongType())),
        T.StructField("S", T.StringType(), nullable=False),
    ]
)
PLUS_TWO = dt.timezone(dt.timedelta(hours=2))


def by_rows(converter: RowConverter, rows: list[dict[str, Any]]) -> pa.Table:
    """The rows without errors as the row-by-row conversion makes them, as an Arrow table."""
    converted, errors = converter.convert_rows(rows, None)
    good = [values for values, found in zip(converted, errors, strict=True) if not found]
    columns = list(zip(*good, strict=True)) if good else [() for _ in converter.names]
    arrays = [pa.array(list(c), type=f.type) for c, f in zip(columns, converter.arrow_schema, strict=True)]
    return pa.Table.from_arrays(arrays, schema=converter.arrow_schema)


def test_a_batch_of_like_rows_converts_column_by_column_to_what_row_by_row_gives() -> None:
    converter = RowConverter.for_schema(SCHEMA)
    rows = [
        {"i": 1, "l": 2**40, "n": decimal.Decimal("1.5"), "f": 0.25, "r": 1.1, "b": True, "d": dt.date(2024, 2, 29),
         "ntz": dt.datetime(2024, 2, 29, 10, 0), "ltz": dt.datetime(2024, 2, 29, 10, 0), "bin": b"\x01",
         "v": '{"a": 1}', "a": [1, 2], "s": "x"},
        # Values of other types than the column's convert one by one, in the same column pass.
        {"i": "7", "l": 3.0, "n": 2, "f": "2.5", "r": 2, "b": "yes", "d": "2024-03-01",
         "ntz": dt.datetime(2024, 2, 29, 10, 0, tzinfo=PLUS_TWO), "ltz": dt.datetime(2024, 2, 29, 10, 0, tzinfo=PLUS_TWO),
         "bin": "CAFE", "v": {"k": [1, "two"]}, "a": "[3]", "s": 5},
        {"i": None, "l": None, "n": None, "f": None, "r": None, "b": None, "d": None, "ntz": None, "ltz": None,
         "bin": None, "v": None, "a": None, "s": "z"},
    ]  # fmt: skip
    converted = converter.convert(rows, "3")
    assert converted.errors == ()
    assert converter._columns(rows) is not None  # the column-by-column way was taken
    assert converted.table.equals(by_rows(converter, rows))
    second = converted.table.slice(1, 1).to_pylist()[0]
    assert second["NTZ"] == dt.datetime(2024, 2, 29, 10, 0)  # a wall-clock time keeps its clock, offset dropped
    assert second["LTZ"] == dt.datetime(2024, 2, 29, 8, 0, tzinfo=dt.timezone.utc)  # an instant moves to UTC


def test_a_batch_the_columns_cannot_take_goes_row_by_row_and_names_each_error() -> None:
    converter = RowConverter.for_schema(SCHEMA)
    rows = [
        {"i": 2**40, "n": decimal.Decimal("1.005"), "s": "out of INT's range"},
        {"i": 1, "n": decimal.Decimal("1.005"), "s": "rounds half up"},
        {"i": 2, "n": decimal.Decimal("1"), "s": None},
    ]
    converted = converter.convert(rows, "3")
    assert [(e.row_index, e.column, e.offset_token) for e in converted.errors] == [(0, "I", "3"), (2, "S", "3")]
    assert "out of range" in converted.errors[0].message and "non-nullable" in converted.errors[1].message
    assert converted.table.to_pylist() == [{**dict.fromkeys(converter.names), "I": 1, "N": decimal.Decimal("1.01"),
                                            "S": "rounds half up"}]  # fmt: skip
    assert converted.table.equals(by_rows(converter, rows))


def test_rows_with_other_keys_or_not_dicts_go_row_by_row() -> None:
    converter = RowConverter.for_schema(SCHEMA)
    assert converter._columns([{"i": 1, "s": "a"}, {"s": "b"}]) is None  # keys differ
    assert converter._columns([{"i": 1, "I": 2, "s": "a"}]) is None  # two keys for one column
    assert converter._columns([{"s": "a"}, ("s", "b")]) is None  # not a dict
    converted = converter.convert([{"s": "a"}, ("s", "b"), {"s": "c", "nope": 1}], None)
    assert [(e.row_index, e.column) for e in converted.errors] == [(1, None), (2, "nope")]
    assert converted.table.column("S").to_pylist() == ["a"]
    empty = converter.convert([], None)
    assert (empty.table.num_rows, empty.errors, empty.table.schema) == (0, (), converter.arrow_schema)
