"""Rules of the code's shape that the import contract (``.importlinter``) cannot state."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "lakeclone"


def _calls_of(attribute: str, tree: ast.AST) -> list[int]:
    """The lines of the calls ``<anything>.<attribute>()`` in ``tree``."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == attribute
    ]


def test_only_the_catalog_package_opens_a_catalog_transaction() -> None:
    """A statement's catalog writes go through its unit of work, which decides when they commit (issue 23)."""
    opened = {
        f"{path.relative_to(PACKAGE.parent)}:{line}"
        for path in PACKAGE.rglob("*.py")
        if PACKAGE / "catalog" not in path.parents
        for line in _calls_of("transaction", ast.parse(path.read_text(encoding="utf-8")))
    }
    assert opened == set()
    # The rule finds what it looks for: the catalog package itself opens them.
    assert _calls_of("transaction", ast.parse((PACKAGE / "catalog" / "access.py").read_text(encoding="utf-8")))
