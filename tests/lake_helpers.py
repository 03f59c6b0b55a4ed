"""Small queries the tests share: a table's rows, its folder, its catalog entry."""

from __future__ import annotations

from typing import Any

from delta_reader import local_path, sorted_rows

import lakeclone
from lakeclone.catalog.store import Catalog, TableEntry


def rows(lake: lakeclone.Lake, sql: str) -> list[tuple[Any, ...]]:
    """A query's rows, sorted, to compare with the Delta kernel's."""
    return sorted_rows(lake.sql(sql).collect())


def location(lake: lakeclone.Lake, name: str) -> str:
    """A table's folder, as DESCRIBE DETAIL reports it."""
    (detail,) = lake.sql(f"DESCRIBE DETAIL {name}").collect()
    return str(local_path(detail.location)).rstrip("/")


def catalog_entry(
    lake: lakeclone.Lake, name: str, schema: str = "PUBLIC", database: str = "LAKE"
) -> TableEntry | None:
    """A table's row in the warehouse's catalog, read directly."""
    catalog = Catalog(lake.warehouse / "catalog.sqlite")
    try:
        return catalog.table(database, schema, name)
    finally:
        catalog.close()
