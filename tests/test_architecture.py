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


# What the guard answers that decides whether a statement may run; who a role is and what it sees only filter listings.
_CHECKS = ("statement", "check", "require", "require_for_view", "meets", "holds", "grantable", "table")


def _guard_checks(tree: ast.AST) -> list[int]:
    """The lines of the calls in ``tree`` that ask the guard whether something may run."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _CHECKS
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "GUARD"
    ]


def test_privileges_are_checked_only_from_what_binds_declare() -> None:
    """No feature checks a privilege in its handler: a statement's bind (or a table function's needs) says what it needs,
    and the access feature alone checks it (issue 23)."""
    checked = {
        f"{path.relative_to(PACKAGE.parent)}:{line}"
        for path in PACKAGE.rglob("*.py")
        if PACKAGE / "access" not in path.parents
        for line in _guard_checks(ast.parse(path.read_text(encoding="utf-8")))
    }
    assert checked == set()
    # The rule finds what it looks for, and lets a listing ask what a role sees.
    sample = "GUARD.require(catalog, roles, need)\nif GUARD.sees(catalog, roles, securable): pass\nGUARD.holds(c, r, s, p)"
    assert _guard_checks(ast.parse(sample)) == [1, 3]


def _kind_words_compared(tree: ast.AST, words: set[str]) -> list[int]:
    """The lines of ``tree`` that compare something with a kind's SQL word (``== "TABLE"``, ``in ("SCHEMA", …)``)."""

    def is_word(node: ast.expr) -> bool:
        return isinstance(node, ast.Constant) and node.value in words

    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        listed = [e for o in operands if isinstance(o, (ast.Tuple, ast.List, ast.Set)) for e in o.elts]
        if any(is_word(o) for o in [*operands, *listed]):
            lines.append(node.lineno)
    return lines


def test_kinds_are_compared_as_enums_not_as_their_sql_words() -> None:
    """A statement's kind words become ``ObjectKind``/``GranteeKind`` where they are read (issue 23).

    The dialect spells them as SQL does, and widgets read them from SHOW's rows, where a kind is the text SQL shows.
    """
    from lakeclone.catalog.entries import GranteeKind, ObjectKind

    words = {kind.value for kind in ObjectKind} | {kind.value for kind in GranteeKind}
    exempt = (PACKAGE / "dialect", PACKAGE / "widgets")
    compared = {
        f"{path.relative_to(PACKAGE.parent)}:{line}"
        for path in PACKAGE.rglob("*.py")
        if not any(folder in path.parents for folder in exempt)
        for line in _kind_words_compared(ast.parse(path.read_text(encoding="utf-8")), words)
    }
    assert compared == set()
    # The rule finds what it looks for.
    sample = ast.parse('if kind == "TABLE" or scope in ("SCHEMA", "X"): pass\nif role is GranteeKind.ROLE: pass')
    assert _kind_words_compared(sample, words) == [1, 1]


def _around_the_lake(tree: ast.AST) -> list[int]:
    """The lines of ``tree`` that reach a Lake's insides (``._executor``) or make a Lake or a catalog connection of their own."""
    made = {"Lake", "Catalog", "CatalogConnection"}
    aliases = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.name in made
    }

    def reaches(node: ast.AST) -> bool:
        if isinstance(node, ast.Attribute):
            return node.attr == "_executor"
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in aliases

    return [node.lineno for node in ast.walk(tree) if reaches(node)]


def test_channels_widgets_and_magics_use_the_public_lake_api() -> None:
    """They work through the Lake they are given (issue 23): a streaming client's session is ``lake.worksheet()``."""
    reached = {
        f"{path.relative_to(PACKAGE.parent)}:{line}"
        for folder in ("channels", "widgets", "magics")
        for path in (PACKAGE / folder).rglob("*.py")
        for line in _around_the_lake(ast.parse(path.read_text(encoding="utf-8")))
    }
    assert reached == set()
    # The rule finds what it looks for: the old client's second Lake and catalog, and a reach into the executor.
    sample = ast.parse(
        "from lakeclone.lake import Lake as LakeType\nfrom lakeclone.catalog.store import Catalog\n"
        "s = LakeType(w)\nr = Catalog(p)\nx = lake._executor.catalog"
    )
    assert _around_the_lake(sample) == [3, 4, 5]
