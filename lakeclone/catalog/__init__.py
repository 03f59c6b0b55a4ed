"""The catalog: databases, schemas, tables and their parameters, kept in SQLite in the warehouse."""

from lakeclone.catalog.names import QualifiedName
from lakeclone.catalog.parameters import PARAMETERS, Parameter
from lakeclone.catalog.store import Catalog, DatabaseEntry, SchemaEntry, TableEntry

__all__ = [
    "PARAMETERS",
    "Catalog",
    "DatabaseEntry",
    "Parameter",
    "QualifiedName",
    "SchemaEntry",
    "TableEntry",
]
