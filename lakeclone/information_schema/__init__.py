"""INFORMATION_SCHEMA: each database's views of what it holds, as Snowflake's.

TABLES, COLUMNS, VIEWS, SCHEMATA and TABLE_PRIVILEGES, filtered by the role.
"""

from lakeclone.engine import registry
from lakeclone.information_schema import views

registry.RELATIONS.append(views.bind_information_schema)

__all__ = ["views"]
