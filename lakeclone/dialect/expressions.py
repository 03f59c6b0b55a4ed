"""Syntax-tree nodes for the lsql statements that sqlglot has no node for.

Each node is a plain :class:`sqlglot.exp.Expression`: ``arg_types`` names its
arguments and marks the required ones, so the parser validates what it builds
and the generator in :mod:`lakeclone.dialect.lsql` turns every node back into text.
"""

from __future__ import annotations

from sqlglot import exp


class LsqlClone(exp.Clone):
    """The ``CLONE`` source of a ``CREATE``, for both Snowflake and Delta Lake syntax.

    Snowflake's ``CLONE s`` is a zero-copy clone (neither flag set), Delta's
    ``SHALLOW CLONE`` sets ``shallow`` and ``DEEP CLONE`` sets ``deep``. ``this``
    is the source table; its ``when`` (``AT``/``BEFORE``) or ``version``
    (``VERSION AS OF``/``TIMESTAMP AS OF``) argument pins the point in time.
    """

    arg_types = {**exp.Clone.arg_types, "deep": False}


class DescribeHistory(exp.Expression):
    """``DESCRIBE HISTORY t [LIMIT n]``: ``this`` is the table, ``limit`` a number literal."""

    arg_types = {"this": True, "limit": False}


class DescribeDetail(exp.Expression):
    """``DESCRIBE DETAIL t``: ``this`` is the table."""

    arg_types = {"this": True}


class ShowParameters(exp.Expression):
    """``SHOW PARAMETERS [LIKE 'pat'] [IN {TABLE | SCHEMA | DATABASE} name]``.

    ``kind`` is ``"TABLE"``, ``"SCHEMA"``, ``"DATABASE"`` or absent; ``this`` is
    the named object as a table reference (a schema's database, if given, in
    ``db``) and ``like`` the pattern literal.
    """

    arg_types = {"this": False, "kind": False, "like": False}


class SetParameters(exp.Expression):
    """``ALTER {DATABASE | SCHEMA | TABLE | VIEW} [IF EXISTS] name SET K = v [K2 = v2 ...]``.

    ``expressions`` are :class:`sqlglot.exp.Property` nodes whose ``this`` is the
    upper-cased parameter name as a :class:`sqlglot.exp.Var` and whose ``value``
    is a number, string or boolean literal.
    """

    arg_types = {"this": True, "kind": True, "exists": False, "expressions": True}


class UnsetParameters(exp.Expression):
    """``ALTER {DATABASE | SCHEMA | TABLE | VIEW} [IF EXISTS] name UNSET K [, K2 ...]``.

    ``expressions`` are the upper-cased parameter names as :class:`sqlglot.exp.Var`.
    """

    arg_types = {"this": True, "kind": True, "exists": False, "expressions": True}


class SessionParameters(exp.Expression):
    """``ALTER SESSION SET K = v [, K2 = v2 ...]``, ``SET K = v`` and ``ALTER SESSION UNSET K [, K2 ...]``.

    For SET, ``expressions`` are :class:`sqlglot.exp.Property` nodes whose ``this``
    is the upper-cased parameter name as a :class:`sqlglot.exp.Var` (a dotted
    name, such as Delta's settings have, in one Var) and whose ``value`` is a
    number, string or boolean literal; for UNSET (``unset``), the names alone.
    """

    arg_types = {"expressions": True, "unset": False}


class AlterRecluster(exp.Expression):
    """``ALTER TABLE [IF EXISTS] t {SUSPEND | RESUME} RECLUSTER``."""

    arg_types = {"this": True, "exists": False, "suspend": False}


class AlterClustering(exp.Expression):
    """``ALTER TABLE [IF EXISTS] t CLUSTER BY (a, b)`` or ``... DROP CLUSTERING KEY``.

    ``expressions`` holds the clustering columns; it is empty when the key is dropped.
    """

    arg_types = {"this": True, "exists": False, "expressions": False}


class Vacuum(exp.Expression):
    """``VACUUM t [RETAIN n HOURS] [DRY RUN]``: ``retain`` is the hours as a number literal."""

    arg_types = {"this": True, "retain": False, "dry_run": False}


class Explain(exp.Expression):
    """``EXPLAIN [USING {TEXT | TABULAR | JSON}] q`` (Snowflake) or ``EXPLAIN [EXTENDED | FORMATTED | CODEGEN | COST] q``.

    ``this`` is the explained statement, ``using`` Snowflake's output format,
    ``mode`` Databricks' (Spark's) plan mode; at most one of them is set.
    """

    arg_types = {"this": True, "using": False, "mode": False}


class Restore(exp.Expression):
    """Delta's ``RESTORE [TABLE] t [TO] {VERSION | TIMESTAMP} AS OF …``.

    ``this`` is the table, with the point to restore as its ``version``
    (an :class:`sqlglot.exp.Version`, as ``FROM t VERSION AS OF n`` has it).
    """

    arg_types = {"this": True}


class Optimize(exp.Expression):
    """``OPTIMIZE t [ZORDER BY (c, ...)]``: compacts the table's small files, Z-ordered by ``zorder``'s columns if given."""

    arg_types = {"this": True, "zorder": False}


class CreateStream(exp.Expression):
    """``CREATE [OR REPLACE] STREAM [IF NOT EXISTS] s ON {TABLE | VIEW} src [AT|BEFORE(...)] [options]``.

    ``kind`` is ``"TABLE"`` or ``"VIEW"``; ``source`` is the source's reference,
    its ``when`` holding an ``AT``/``BEFORE`` point if one is given (``STREAM => 's2'``
    included); ``append_only`` and ``show_initial_rows`` are booleans, ``comment``
    a string literal.
    """

    arg_types = {
        "this": True,
        "kind": True,
        "source": True,
        "replace": False,
        "exists": False,
        "append_only": False,
        "show_initial_rows": False,
        "comment": False,
    }


class CreatePrincipal(exp.Expression):
    """``CREATE [OR REPLACE] {USER | ROLE} [IF NOT EXISTS] name``: ``kind`` is ``"USER"`` or ``"ROLE"``."""

    arg_types = {"this": True, "kind": True, "replace": False, "exists": False}


class DropPrincipal(exp.Expression):
    """``DROP {USER | ROLE} [IF EXISTS] name``."""

    arg_types = {"this": True, "kind": True, "exists": False}


class GrantRole(exp.Expression):
    """``GRANT ROLE r TO {USER | ROLE} x`` (``revoke`` unset) or ``REVOKE ROLE r FROM {USER | ROLE} x``.

    ``this`` is the granted role, ``kind`` the grantee's kind and ``to`` the grantee.
    """

    arg_types = {"this": True, "kind": True, "to": True, "revoke": False}


class GrantPrivileges(exp.Expression):
    """``GRANT privileges ON target TO ROLE r [WITH GRANT OPTION]`` and its ``REVOKE … FROM ROLE r``.

    ``expressions`` are the privileges as :class:`sqlglot.exp.Var` (``"CREATE TABLE"``),
    ``kind`` the securable's kind (``"TABLE"``, ``"SCHEMA"``, ``"ACCOUNT"``, ...),
    ``this`` the securable (absent for ``ACCOUNT``), ``scope`` ``"ALL"`` or ``"FUTURE"``
    for ``ON ALL|FUTURE TABLES IN SCHEMA s`` (``kind`` is then the objects' kind and
    ``container`` ``"SCHEMA"`` or ``"DATABASE"``), ``to`` the role. ``copy_grants``
    is ``COPY CURRENT GRANTS`` of a ``GRANT OWNERSHIP``; ``grant_option`` is
    ``WITH GRANT OPTION``, or a REVOKE's ``GRANT OPTION FOR``.
    """

    arg_types = {
        "expressions": True,
        "kind": True,
        "this": False,
        "scope": False,
        "container": False,
        "to": True,
        "grant_option": False,
        "copy_grants": False,
        "revoke": False,
    }


class ShowGrants(exp.Expression):
    """``SHOW GRANTS ON kind x``, ``SHOW GRANTS TO {ROLE | USER} x``, ``SHOW FUTURE GRANTS IN SCHEMA s``.

    ``on`` is the object's kind with ``this`` the object (a table reference), or
    ``to`` the principal's kind with ``this`` its name; ``future`` marks the
    future-grants form, whose ``on`` is ``"SCHEMA"``.
    """

    arg_types = {"this": False, "on": False, "to": False, "future": False}


class CreatePolicy(exp.Expression):
    """``CREATE [OR REPLACE] {MASKING POLICY | ROW ACCESS POLICY | TAG} [IF NOT EXISTS] name …``.

    ``kind`` is ``"MASKING POLICY"``, ``"ROW ACCESS POLICY"`` or ``"TAG"``. A
    policy has its arguments in ``expressions`` (:class:`sqlglot.exp.ColumnDef`
    nodes), its ``returns`` type and its ``body``; a tag has its
    ``allowed_values`` (string literals). ``comment`` is a string literal.
    """

    arg_types = {
        "this": True,
        "kind": True,
        "replace": False,
        "exists": False,
        "expressions": False,
        "returns": False,
        "body": False,
        "allowed_values": False,
        "comment": False,
    }


class DropPolicy(exp.Expression):
    """``DROP {MASKING POLICY | ROW ACCESS POLICY | TAG} [IF EXISTS] name``."""

    arg_types = {"this": True, "kind": True, "exists": False}


class AlterPolicy(exp.Expression):
    """``ALTER {MASKING POLICY | ROW ACCESS POLICY} [IF EXISTS] p SET BODY -> expr`` (``body``),
    ``… SET COMMENT = '…'`` / ``UNSET COMMENT`` (``comment``, ``unset``), and
    ``ALTER TAG t SET|UNSET MASKING POLICY p [, …]`` (``policies``, ``unset``)."""

    arg_types = {
        "this": True,
        "kind": True,
        "exists": False,
        "body": False,
        "comment": False,
        "policies": False,
        "unset": False,
    }


class AlterColumnPolicy(exp.Expression):
    """``ALTER {TABLE | VIEW} t MODIFY COLUMN c SET MASKING POLICY p [USING (c, cond …)] [FORCE]``, or ``UNSET``.

    ``column`` is the column's identifier, ``policy`` the policy (a table
    reference; absent for UNSET), ``using`` the columns the policy's arguments read.
    """

    arg_types = {
        "this": True,
        "kind": True,
        "exists": False,
        "column": True,
        "policy": False,
        "using": False,
        "force": False,
        "unset": False,
    }


class AlterRowAccessPolicy(exp.Expression):
    """``ALTER {TABLE | VIEW} t ADD ROW ACCESS POLICY r ON (col …)`` or ``DROP ROW ACCESS POLICY r``."""

    arg_types = {"this": True, "kind": True, "exists": False, "policy": True, "expressions": False, "drop": False}


class AlterTags(exp.Expression):
    """``ALTER {TABLE | VIEW} t [MODIFY COLUMN c] SET TAG tag = 'v' [, …]`` or ``UNSET TAG tag [, …]``.

    ``expressions`` are :class:`sqlglot.exp.EQ` nodes (tag reference = string
    literal) for SET, tag references for UNSET; ``column`` names the column, if any.
    """

    arg_types = {"this": True, "kind": True, "exists": False, "column": False, "expressions": True, "unset": False}
