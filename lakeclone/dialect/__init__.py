"""lsql, lakeclone's SQL dialect: Snowflake SQL plus Delta Lake's clone and maintenance syntax."""

from __future__ import annotations

from lakeclone.dialect.lsql import Lsql, ParsedStatement, option_reference, parse, table_reference

__all__ = ["Lsql", "ParsedStatement", "option_reference", "parse", "table_reference"]
