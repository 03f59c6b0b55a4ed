"""INFORMATION_SCHEMA: each database's views of what it holds, as Snowflake's.

TABLES, COLUMNS, VIEWS, SCHEMATA and TABLE_PRIVILEGES, filtered by the role;
the QUERY_HISTORY table functions; SHOW COLUMNS; GET_DDL and SHOW CREATE TABLE.
"""

from lakeclone.engine import registry
from lakeclone.information_schema import columns, ddl, history, views

registry.RELATIONS.append(views.bind_information_schema)
registry.TABLE_FUNCTIONS.update(history.TABLE_FUNCTIONS)
registry.SCALAR_FUNCTIONS["GET_DDL"] = ddl.get_ddl
registry.SHOWS["COLUMNS"] = columns.show_columns
registry.SHOWS["CREATE TABLE"] = ddl.show_create_table

__all__ = ["columns", "ddl", "history", "views"]
