"""The value of an ``%%lsql`` cell: a pandas DataFrame that knows how it was made."""

from __future__ import annotations

import html
import time
from typing import TYPE_CHECKING

import pandas as pd

from lakeclone.spark_errors import checked

if TYPE_CHECKING:
    from pyspark.sql import DataFrame as SparkDataFrame

__all__ = ["LsqlResult"]


class LsqlResult(pd.DataFrame):
    """The rows a cell fetched, with the run's timing and whether rows were left behind.

    It is a DataFrame, so everything pandas does works on it. Frames derived from
    it (a filter, a copy) are plain DataFrames, since these attributes would not
    describe them.

    Attributes:
        elapsed: seconds from sending the SQL to having the rows.
        truncated: whether the query returned more than ``max_rows`` rows, of
            which only the first ``max_rows`` were fetched.
        max_rows: the fetch cap in force for this result.
        display_limit: how many rows the notebook display shows.
        query_id: the id of the statement that made it, for
            ``BEFORE(STATEMENT => '<id>')``.
        statements: how many statements the cell ran; the rows are the last one's.
        ran_as: who ran them, ``user BOB, role ANALYST``; None when not known.
        position: (n, of) when the cell shows each of its statements' results (``--each``) and this is the n-th.

    Example:
        >>> result = LsqlResult(pd.DataFrame({"n": range(50)}), elapsed=0.42,
        ...                     truncated=False, max_rows=10_000, display_limit=20,
        ...                     query_id="01b2...")
        >>> result.footer()
        '50 rows · 0.42 s · showing first 20 of 50 rows'
    """

    _metadata = ["elapsed", "truncated", "max_rows", "display_limit", "query_id", "statements", "ran_as", "position"]

    def __init__(
        self,
        rows: pd.DataFrame,
        *,
        elapsed: float,
        truncated: bool,
        max_rows: int,
        display_limit: int,
        query_id: str | None,
        statements: int = 1,
        ran_as: str | None = None,
    ) -> None:
        super().__init__(rows)
        self.elapsed = elapsed
        self.truncated = truncated
        self.max_rows = max_rows
        self.display_limit = display_limit
        self.query_id = query_id
        self.statements = statements
        self.position: tuple[int, int] | None = None
        self.ran_as = ran_as

    @property
    def _constructor(self) -> type[pd.DataFrame]:
        plain: type[pd.DataFrame] = pd.DataFrame
        return plain

    @classmethod
    def fetch(
        cls,
        frame: SparkDataFrame,
        *,
        started: float,
        max_rows: int,
        display_limit: int,
        query_id: str | None,
        statements: int = 1,
        ran_as: str | None = None,
    ) -> LsqlResult:
        """Bring at most ``max_rows`` rows of a Spark DataFrame to the driver.

        One row more than the cap is asked for, to know whether the cap cut
        anything off without counting the whole result.

        Args:
            frame: the statement's result.
            started: ``time.perf_counter()`` when the SQL was sent.
            max_rows: the cap on rows fetched.
            display_limit: rows the notebook display shows.
            query_id: the statement's id.
            statements: how many statements the cell ran.
            ran_as: who ran them (``user BOB, role ANALYST``).

        Raises:
            LakecloneError: the query failed while running (a bad cast, a
                division by zero): Spark runs a query only when rows are asked for.
        """
        # The limited frame is new: it takes what lakeclone noted on the statement's
        # (its position in the cell, the Lake's progress setting).
        rows: pd.DataFrame = checked(frame.limit(max_rows + 1), like=frame).toPandas()
        truncated = len(rows) > max_rows
        if truncated:
            rows = rows.iloc[:max_rows]
        return cls(
            rows,
            elapsed=time.perf_counter() - started,
            truncated=truncated,
            max_rows=max_rows,
            display_limit=display_limit,
            query_id=query_id,
            statements=statements,
            ran_as=ran_as,
        )

    def footer(self) -> str:
        """The line under the table: statements run (when more than one), row count, time, what is not shown, and who ran it.

        Example:
            ``1,234 rows · 0.42 s · showing first 20 of 1,234 rows · as user ADMIN, role ACCOUNTADMIN``, or
            ``3 statements ran; the last one's 1 row · 0.42 s``
        """
        count = len(self)
        rows = f"more than {count:,} rows" if self.truncated else f"{count:,} row{'' if count == 1 else 's'}"
        if self.statements > 1:
            rows = f"{self.statements} statements ran; the last one's {rows}"
        parts = [rows, f"{self.elapsed:.2f} s"]
        if self.position is not None:
            parts.insert(0, "statement {} of {}".format(*self.position))
        if count > self.display_limit:
            # Past the fetch cap the total is unknown: it was never counted.
            of = "" if self.truncated else f" of {count:,} rows"
            parts.append(f"showing first {self.display_limit:,}{of}")
        if self.truncated:
            parts.append(f"fetched first {self.max_rows:,} rows; use lake.sql(...) for all")
        if self.ran_as is not None:
            parts.append(f"as {self.ran_as}")
        return " · ".join(parts)

    def _shown(self) -> pd.DataFrame:
        return self.iloc[: self.display_limit]

    # pandas' row numbers are no part of a query's result: the table shows the result's columns only.
    def _repr_html_(self) -> str:
        table = self._shown().to_html(
            notebook=True, max_cols=pd.get_option("display.max_columns"), show_dimensions=False, index=False
        )
        return f"<div>{table}<p>{html.escape(self.footer())}</p></div>"

    def __repr__(self) -> str:
        table = self._shown().to_string(index=False, max_cols=pd.get_option("display.max_columns"))
        return f"{table}\n{self.footer()}"
