"""What lakeclone notes on a result DataFrame for the actions run on it later.

Spark runs a statement's query only when its rows are asked for, after
``lake.sql`` has returned. What those later actions need to know (which
statement of a text made the frame, its Lake's progress setting) travels on
the frame itself, under names no column can take.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

_PREFIX = "_lakeclone_"


def note(frame: DataFrame, name: str, value: object) -> DataFrame:
    """``frame``, noting ``value`` under ``name``."""
    # vars(): a DataFrame's attribute lookup falls back to its columns, which asks Spark.
    vars(frame)[_PREFIX + name] = value
    return frame


def noted(frame: DataFrame, name: str) -> Any:
    """What :func:`note` noted on ``frame`` under ``name``; None if nothing."""
    return vars(frame).get(_PREFIX + name)


def carry(frame: DataFrame, source: DataFrame) -> None:
    """Give ``frame`` every note of ``source``, the frame it was derived from."""
    vars(frame).update({k: v for k, v in vars(source).items() if k.startswith(_PREFIX)})
