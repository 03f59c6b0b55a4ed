"""The catalog: databases, schemas, tables and what lakeclone knows of them, kept in SQLite in the warehouse."""

from lakeclone.catalog.entries import DatabaseEntry, ObjectKind, SchemaEntry, TableEntry, TableKind
from lakeclone.catalog.names import QualifiedName
from lakeclone.catalog.parameters import PARAMETERS, Parameter
from lakeclone.catalog.store import Catalog

__all__ = [
    "PARAMETERS",
    "Catalog",
    "DatabaseEntry",
    "ObjectKind",
    "Parameter",
    "QualifiedName",
    "SchemaEntry",
    "TableEntry",
    "TableKind",
]
