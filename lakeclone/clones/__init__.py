"""Clones: zero-copy and deep clones of tables, schemas and databases; their lineage; VACUUM and purge."""
