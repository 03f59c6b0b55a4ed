"""Snowflake's column types on Delta: what DESCRIBE calls them, and the semi-structured ARRAY and OBJECT."""

from __future__ import annotations

import json

import pytest
from delta_reader import kernel_rows
from lake_helpers import location, rows

import lakeclone

pytestmark = pytest.mark.spark


def test_describe_names_each_column_type_as_snowflake_does(lake: lakeclone.Lake) -> None:
    lake.sql(
        "CREATE TABLE t (i INT, n NUMBER(10, 2), f FLOAT, s STRING, c VARCHAR(20), b BOOLEAN, d DATE, "
        "ntz TIMESTAMP_NTZ, ltz TIMESTAMP_LTZ, bin BINARY, v VARIANT, a ARRAY, o OBJECT, typed ARRAY(INT))"
    )
    described = {r.name: r.type for r in lake.sql("DESCRIBE TABLE t").collect()}
    assert described == {
        "I": "NUMBER(38,0)",
        "N": "NUMBER(10,2)",
        "F": "FLOAT",
        "S": "VARCHAR(16777216)",
        "C": "VARCHAR(20)",
        "B": "BOOLEAN",
        "D": "DATE",
        "NTZ": "TIMESTAMP_NTZ(9)",
        "LTZ": "TIMESTAMP_LTZ(9)",
        "BIN": "BINARY(8388608)",
        "V": "VARIANT",
        "A": "ARRAY",
        "O": "OBJECT",
        "TYPED": "ARRAY(NUMBER(38,0))",
    }
    lake.sql("CREATE VIEW w AS SELECT i, a FROM t")
    assert [(r.name, r.type) for r in lake.sql("DESCRIBE VIEW w").collect()] == [("I", "NUMBER(38,0)"), ("A", "ARRAY")]
    columns = rows(
        lake,
        "SELECT COLUMN_NAME, DATA_TYPE FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_NAME = 'T' AND COLUMN_NAME IN ('A', 'O', 'V')",
    )
    assert sorted(columns) == [("A", "ARRAY"), ("O", "OBJECT"), ("V", "VARIANT")]
    # GET_DDL's text makes the same columns again.
    ddl = rows(lake, "SELECT GET_DDL('TABLE', 't')")[0][0]
    assert "\tA ARRAY," in ddl and "\tO OBJECT," in ddl
    lake.sql(ddl.replace("create or replace TABLE T (", "create TABLE copied ("))
    assert {r.name: r.type for r in lake.sql("DESCRIBE TABLE copied").collect()} == described


def test_array_and_object_columns_hold_only_arrays_and_objects(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE docs (id INT, tags ARRAY, attrs OBJECT)")
    lake.sql(
        "INSERT INTO docs SELECT 1, ARRAY_CONSTRUCT('red', 'blue'), OBJECT_CONSTRUCT('size', 3, 'shape', 'round');"
        "INSERT INTO docs SELECT 2, PARSE_JSON('[]'), PARSE_JSON('{}');"
        "INSERT INTO docs VALUES (3, NULL, NULL)"
    )
    query = "SELECT id, ARRAY_SIZE(tags), to_json(tags), attrs:size::INT, to_json(attrs) FROM docs ORDER BY id"
    assert rows(lake, query) == [
        (1, 2, '["red","blue"]', 3, '{"shape":"round","size":3}'),
        (2, 0, "[]", None, "{}"),
        (3, None, None, None, None),
    ]
    assert rows(lake, "SELECT tags[1]::STRING, attrs:shape::STRING FROM docs WHERE id = 1") == [("blue", "round")]
    before = rows(lake, "SELECT id, to_json(tags), to_json(attrs) FROM docs ORDER BY id")
    with pytest.raises(lakeclone.LakecloneError, match=r"Failed to cast variant value 1 to ARRAY"):
        lake.sql("INSERT INTO docs SELECT 4, PARSE_JSON('1'), NULL")
    with pytest.raises(lakeclone.LakecloneError, match=r"Failed to cast variant value \[1,2\] to OBJECT"):
        lake.sql("UPDATE docs SET attrs = PARSE_JSON('[1, 2]') WHERE id = 1")
    with pytest.raises(lakeclone.LakecloneError, match=r'Failed to cast variant value "x" to ARRAY'):
        lake.sql(
            "MERGE INTO docs USING (SELECT 2 AS id) s ON docs.id = s.id WHEN MATCHED THEN UPDATE SET tags = PARSE_JSON('\"x\"')"
        )
    assert rows(lake, "SELECT id, to_json(tags), to_json(attrs) FROM docs ORDER BY id") == before
    lake.sql("UPDATE docs SET tags = ARRAY_CONSTRUCT(1, 2, 3) WHERE id = 3")
    assert rows(lake, "SELECT ARRAY_SIZE(tags) FROM docs WHERE id = 3") == [(3,)]
    # Delta stores both as VARIANT: its kernel reads the table back.
    assert len(kernel_rows(location(lake, "DOCS"))) == 3


def test_subscripts_of_semi_structured_values_read_as_in_snowflake(lake: lakeclone.Lake) -> None:
    """``v['key']`` and ``v[0]`` read a VARIANT or OBJECT, and a missing key or an index past the end is NULL."""
    lake.sql("CREATE TABLE docs (id INT, v VARIANT, tags ARRAY, attrs OBJECT, scores ARRAY(INT))")
    lake.sql(
        "INSERT INTO docs SELECT 1, PARSE_JSON('{\"k\": [10, 20], \"n\": {\"x\": 1}}'), ARRAY_CONSTRUCT('red', 'blue'), "
        "OBJECT_CONSTRUCT('size', 3), ARRAY_CONSTRUCT(7, 8)"
    )
    query = (
        "SELECT v['k'][1]::INT, v['n']['x']::INT, v['nope'], v['k'][5], d.v:k[0]::INT, tags[1]::STRING, tags[9], "
        "attrs['size']::INT, attrs['colour'], scores[1], scores[2] FROM docs d"
    )
    assert rows(lake, query) == [(20, 1, None, None, 10, "blue", None, 3, None, 8, None)]
    # Built in the query; and a CTE's column is not the table's of the same name.
    assert rows(
        lake, "SELECT ARRAY_CONSTRUCT(1, 2)[7], PARSE_JSON('{\"a\": 5}')['a']::INT, OBJECT_CONSTRUCT('b', 6)['b']::INT"
    ) == [(None, 5, 6)]
    assert rows(lake, "WITH docs AS (SELECT named_struct('k', 4) AS v) SELECT v['k'] FROM docs") == [(4,)]
    # A struct, which a table Spark wrote may hold, is subscripted as Spark does it.
    assert rows(lake, "SELECT named_struct('a', 1)['a']") == [(1,)]


def test_a_channel_loads_array_and_object_values_as_snowpipe_streaming_does(lake: lakeclone.Lake) -> None:
    lake.sql("CREATE TABLE events (id INT, tags ARRAY, attrs OBJECT)")
    with lake.streaming_client("loader") as client:
        channel, _ = client.open_channel("c1", table="events", on_error="CONTINUE")
        response = channel.insert_rows(
            [
                {"id": 1, "tags": ["a", "b"], "attrs": {"k": 1}},
                {"id": 2, "tags": '["c"]', "attrs": '{"k": 2}'},
                {"id": 3, "tags": "7", "attrs": None},  # a value that is not an array goes in an array of one
                {"id": 4, "tags": "x", "attrs": {"k": 4}},  # not JSON
                {"id": 5, "tags": [], "attrs": [1, 2]},  # not an object
            ],
            offset_token="5",
        )
        assert [(e.row_index, e.column) for e in response.errors] == [(3, "TAGS"), (4, "ATTRS")]
        assert "not a JSON object" in response.errors[1].message
        channel.flush()
    loaded = rows(lake, "SELECT id, to_json(tags), to_json(attrs) FROM events ORDER BY id")
    assert loaded == [(1, '["a","b"]', '{"k":1}'), (2, '["c"]', '{"k":2}'), (3, "[7]", None)]
    assert json.loads(loaded[0][1]) == ["a", "b"]


def test_a_time_column_is_refused_rather_than_stored_as_a_timestamp(lake: lakeclone.Lake) -> None:
    with pytest.raises(lakeclone.LakecloneError, match=r"Unsupported data type .TIME.: Delta tables have no time-of-day type"):
        lake.sql("CREATE TABLE t (id INT, at TIME)")
    assert rows(lake, "SHOW TABLES") == []


def test_a_value_that_is_one_function_call_is_compiled_like_any_other(lake: lakeclone.Lake) -> None:
    # An UPDATE's SET value is compiled alone: PARSE_JSON at its root was once left out, storing the text.
    lake.sql("""CREATE TABLE docs (id INT, v VARIANT); INSERT INTO docs SELECT 1, PARSE_JSON('{"a": 1}')""")
    lake.sql("""UPDATE docs SET v = PARSE_JSON('{"a": 2}')""")
    assert rows(lake, "SELECT v:a::INT, to_json(v) FROM docs") == [(2, '{"a":2}')]
    lake.sql("UPDATE docs SET v = OBJECT_CONSTRUCT('a', 3)")
    assert rows(lake, "SELECT v:a::INT FROM docs") == [(3,)]
