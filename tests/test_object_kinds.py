"""Every kind of schema object a feature owns, through the engine's one generic CREATE, DROP and lookup (issue 23)."""

from __future__ import annotations

from pathlib import Path

import pytest

import lakeclone
from lakeclone.catalog.entries import ObjectKind
from lakeclone.engine import registry

# How each kind is created; {name} is the object's name, {folder} a folder outside the warehouse.
CREATE = {
    ObjectKind.VIEW: "CREATE {replace}VIEW {exists}{name} AS SELECT 1 AS x",
    ObjectKind.STREAM: "CREATE {replace}STREAM {exists}{name} ON TABLE base",
    ObjectKind.SEQUENCE: "CREATE {replace}SEQUENCE {exists}{name}",
    ObjectKind.STAGE: "CREATE {replace}STAGE {exists}{name} URL = '{folder}'",
    ObjectKind.FILE_FORMAT: "CREATE {replace}FILE FORMAT {exists}{name} TYPE = CSV",
}

# How SHOW lists each kind.
SHOW = {
    ObjectKind.VIEW: "SHOW VIEWS",
    ObjectKind.STREAM: "SHOW STREAMS",
    ObjectKind.SEQUENCE: "SHOW SEQUENCES",
    ObjectKind.STAGE: "SHOW STAGES",
    ObjectKind.FILE_FORMAT: "SHOW FILE FORMATS",
}


def test_every_kind_a_feature_registers_is_tested_here(lake: lakeclone.Lake) -> None:
    # A Lake loads every feature; a new kind of schema object gets its case below.
    assert set(registry.SCHEMA_OBJECTS) == set(CREATE)
    assert {record.kind for record in registry.SCHEMA_OBJECTS.values() if record.shares_table_names} == {
        ObjectKind.VIEW,
        ObjectKind.STREAM,
    }


def _created(lake: lakeclone.Lake, kind: ObjectKind) -> dict[str, object]:
    return {row["name"]: row["created_on"] for row in lake.sql(SHOW[kind]).collect()}


@pytest.mark.parametrize("kind", list(CREATE), ids=lambda kind: kind.value)
def test_create_replace_if_not_exists_and_drop(
    lake: lakeclone.Lake, clock: lakeclone.ManualClock, tmp_path: Path, kind: ObjectKind
) -> None:
    lake.sql("CREATE TABLE base (x INT)")
    folder = (tmp_path / "files").as_uri()

    def create(*, replace: bool = False, exists: bool = False) -> str:
        text = CREATE[kind].format(
            replace="OR REPLACE " if replace else "", exists="IF NOT EXISTS " if exists else "", name="obj", folder=folder
        )
        return str(lake.sql(text).collect()[0][0])

    assert "successfully created" in create()
    first = _created(lake, kind)
    assert list(first) == ["OBJ"]
    clock.advance(minutes=1)
    with pytest.raises(lakeclone.LakecloneError, match=r"OBJ.*already exists"):
        create()
    assert create(exists=True) == "OBJ already exists, statement succeeded."
    assert _created(lake, kind) == first
    assert "successfully created" in create(replace=True)
    replaced = _created(lake, kind)
    assert list(replaced) == ["OBJ"] and replaced["OBJ"] > first["OBJ"]

    drop = f"DROP {kind.value} obj"
    assert lake.sql(drop).collect()[0][0] == "OBJ successfully dropped."
    assert _created(lake, kind) == {}
    with pytest.raises(lakeclone.LakecloneError, match=r"OBJ.*does not exist"):
        lake.sql(drop)
    assert lake.sql(f"DROP {kind.value} IF EXISTS obj").collect()[0][0] == (
        "Drop statement executed successfully (OBJ already dropped)."
    )


@pytest.mark.parametrize("kind", [ObjectKind.VIEW, ObjectKind.STREAM], ids=lambda kind: kind.value)
def test_views_streams_and_tables_share_one_namespace(lake: lakeclone.Lake, kind: ObjectKind) -> None:
    lake.sql("CREATE TABLE base (x INT)")
    lake.sql(CREATE[kind].format(replace="", exists="", name="taken", folder=""))
    others = [k for k in (ObjectKind.VIEW, ObjectKind.STREAM) if k is not kind]
    for text in ["CREATE TABLE taken (y INT)"] + [
        CREATE[k].format(replace="", exists="", name="taken", folder="") for k in others
    ]:
        with pytest.raises(lakeclone.LakecloneError, match=r"TAKEN.*already exists"):
            lake.sql(text)
    # A kind outside that namespace takes the same name.
    lake.sql("CREATE SEQUENCE taken")


def test_a_kind_reads_and_hashes_as_its_text() -> None:
    # The catalog's rows hold kinds as text; messages and results show them as SQL spells them.
    assert {"FILE FORMAT": 1}[ObjectKind.FILE_FORMAT] == 1
    assert {ObjectKind.MASKING_POLICY: 1}["MASKING POLICY"] == 1
    assert f"{ObjectKind.FILE_FORMAT} f" == str(ObjectKind.FILE_FORMAT) + " f" == "FILE FORMAT f"
    assert ObjectKind.named("file format") is ObjectKind.FILE_FORMAT
    assert ObjectKind.named("warehouse") is None
