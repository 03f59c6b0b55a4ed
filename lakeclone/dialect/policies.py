"""lsql's governance statements: masking policies, row access policies and tags.

sqlglot's Snowflake dialect reads none of them (each falls back to an opaque
command, or, for ``ALTER TABLE … SET TAG``, to a generic ``AlterSet``); lsql
reads them into the nodes of :mod:`lakeclone.dialect.expressions`.
"""

from __future__ import annotations

import typing as t

from sqlglot import exp
from sqlglot.parsers.snowflake import _show_parser
from sqlglot.tokens import TokenType

from lakeclone.dialect import access
from lakeclone.dialect.expressions import (
    AlterColumnPolicy,
    AlterPolicy,
    AlterRowAccessPolicy,
    AlterTags,
    CreatePolicy,
    DropPolicy,
)

if t.TYPE_CHECKING:
    from sqlglot.generator import Generator

MASKING = "MASKING POLICY"
ROW_ACCESS = "ROW ACCESS POLICY"
TAG = "TAG"

# The kinds' words, each as _match_text_seq takes them.
_KINDS: dict[str, tuple[str, ...]] = {MASKING: ("MASKING", "POLICY"), ROW_ACCESS: ("ROW", "ACCESS", "POLICY"), TAG: ("TAG",)}


class PolicyParser(access.AccessParser):
    """The governance part of lsql's parser."""

    def _parse_policy_kind(self) -> str | None:
        for kind, words in _KINDS.items():
            if self._match_text_seq(*words):
                return kind
        return None

    def _parse_create(self) -> exp.Expression:
        index = self._index
        replace = self._match_pair(TokenType.OR, TokenType.REPLACE)
        kind = self._parse_policy_kind()
        if kind is None:
            self._retreat(index)
            return super()._parse_create()
        exists = self._parse_exists(not_=True)
        args: dict[str, t.Any] = {"this": self._parse_table_parts(), "kind": kind, "replace": replace, "exists": exists}
        if kind == TAG:
            if self._match_text_seq("ALLOWED_VALUES"):
                args["allowed_values"] = self._parse_csv(self._parse_required_string)
        else:
            if not self._match(TokenType.ALIAS):
                self.raise_error("Expected AS", self._curr)
            args["expressions"] = self._parse_wrapped_csv(self._parse_policy_argument)
            if not self._match_text_seq("RETURNS"):
                self.raise_error("Expected RETURNS", self._curr)
            args["returns"] = self._parse_types()
            args["body"] = self._parse_policy_body()
        if self._match(TokenType.COMMENT):
            self._match(TokenType.EQ)
            args["comment"] = self._parse_required_string()
        return self.expression(CreatePolicy(**args))

    def _parse_required_string(self) -> exp.Expression | None:
        value = self._parse_string()
        if value is None:
            self.raise_error("Expected a string", self._curr)
        return value

    def _parse_policy_argument(self) -> exp.ColumnDef:
        name = self._parse_id_var(any_token=False)
        kind = self._parse_types()
        if name is None or kind is None:
            self.raise_error("Expected an argument and its type", self._curr)
        return self.expression(exp.ColumnDef(this=name, kind=kind))

    def _parse_policy_body(self) -> exp.Expression | None:
        if not self._match(TokenType.ARROW):
            self.raise_error("Expected ->", self._curr)
        body = self._parse_assignment()
        if body is None:
            self.raise_error("Expected the policy's body", self._curr)
        return body

    def _parse_drop(self, exists: bool = False, kind: str | None = None) -> exp.Drop | exp.Command:
        if kind is None:
            index = self._index
            policy_kind = self._parse_policy_kind()
            if policy_kind is not None:
                if_exists = self._parse_exists()
                # DropPolicy stands where sqlglot's DROP would; the engine dispatches on its class.
                return self.expression(DropPolicy(this=self._parse_table_parts(), kind=policy_kind, exists=if_exists))
            self._retreat(index)
        return super()._parse_drop(exists=exists, kind=kind)

    def _parse_alter(self) -> exp.Expression:
        index = self._index
        kind = self._parse_policy_kind()
        if kind is None:
            self._retreat(index)
            return super()._parse_alter()
        args: dict[str, t.Any] = {"kind": kind, "exists": self._parse_exists(), "this": self._parse_table_parts()}
        unset = self._match_text_seq("UNSET")
        if not unset and not self._match(TokenType.SET):
            self.raise_error("Expected SET or UNSET", self._curr)
        args["unset"] = unset
        if kind == TAG and self._match_text_seq("MASKING", "POLICY"):
            args["policies"] = self._parse_csv(self._parse_table_parts)
        elif kind != TAG and not unset and self._match_text_seq("BODY"):
            args["body"] = self._parse_policy_body()
        elif self._match(TokenType.COMMENT):
            if not unset:
                self._match(TokenType.EQ)
                args["comment"] = self._parse_required_string()
        else:
            self.raise_error("Expected BODY, COMMENT or MASKING POLICY", self._curr)
        return self.expression(AlterPolicy(**args))

    # Actions of ALTER TABLE|VIEW (see TABLE_ACTIONS)

    def _parse_set_tags(self, target: dict[str, t.Any], *, unset: bool) -> AlterTags | None:
        """``SET TAG t = 'v', …`` / ``UNSET TAG t, …`` after ALTER TABLE|VIEW's name; None for other SETs."""
        if not self._match(TokenType.TAG):
            return None
        parse = self._parse_table_parts if unset else self._parse_tag_value
        return self.expression(AlterTags(**target, expressions=self._parse_csv(parse), unset=unset))

    def _parse_tag_value(self) -> exp.EQ:
        tag = self._parse_table_parts()
        if not self._match(TokenType.EQ):
            self.raise_error("Expected =", self._curr)
        return self.expression(exp.EQ(this=tag, expression=self._parse_required_string()))

    def _parse_modify_column(self, target: dict[str, t.Any]) -> exp.Expression | None:
        """A column's masking policy or tags; None (the ALTER left to sqlglot) for other column changes."""
        self._match(TokenType.COLUMN)
        column = self._parse_id_var(any_token=False)
        unset = self._match_text_seq("UNSET")
        if column is None or (not unset and not self._match(TokenType.SET)):
            return None
        if self._match(TokenType.TAG):
            parse = self._parse_table_parts if unset else self._parse_tag_value
            return self.expression(AlterTags(**target, column=column, expressions=self._parse_csv(parse), unset=unset))
        if not self._match_text_seq("MASKING", "POLICY"):
            return None
        args: dict[str, t.Any] = {**target, "column": column, "unset": unset}
        if not unset:
            args["policy"] = self._parse_table_parts()
            if self._match(TokenType.USING):
                args["using"] = self._parse_wrapped_csv(self._parse_column)
            args["force"] = self._match_text_seq("FORCE")
        return self.expression(AlterColumnPolicy(**args))

    def _parse_row_access_action(self, target: dict[str, t.Any], *, drop: bool) -> exp.Expression:
        policy = self._parse_table_parts()
        columns = None
        if not drop:
            if not self._match(TokenType.ON):
                self.raise_error("Expected ON", self._curr)
            columns = self._parse_wrapped_csv(self._parse_column)
        return self.expression(AlterRowAccessPolicy(**target, policy=policy, expressions=columns, drop=drop))


TABLE_ACTIONS: dict[str, t.Callable[[t.Any, dict[str, t.Any]], exp.Expression | None]] = {
    "MODIFY": lambda self, target: self._parse_modify_column(target),
    "ALTER COLUMN": lambda self, target: self._parse_modify_column(target),
    "ADD ROW ACCESS POLICY": lambda self, target: self._parse_row_access_action(target, drop=False),
    "DROP ROW ACCESS POLICY": lambda self, target: self._parse_row_access_action(target, drop=True),
}
"""ALTER TABLE|VIEW actions, after the object's name."""

SHOW_PARSERS: dict[str, t.Callable[[t.Any], exp.Expression]] = {
    "MASKING POLICIES": _show_parser("MASKING POLICIES"),
    "ROW ACCESS POLICIES": _show_parser("ROW ACCESS POLICIES"),
    "TAGS": _show_parser("TAGS"),
}


def describe_parser(kind: str) -> t.Callable[[t.Any], exp.Expression]:
    """``DESCRIBE <kind> name``, the kind's first word already read."""
    rest = _KINDS[kind][1:]

    def parse(self: t.Any) -> exp.Expression:
        if rest and not self._match_text_seq(*rest):
            self.raise_error(f"Expected {' '.join(rest)}", self._curr)
        return self.expression(exp.Describe(this=self._parse_table_parts(), kind=kind))

    return parse


DESCRIBE_PARSERS = {"MASKING": describe_parser(MASKING), "ROW": describe_parser(ROW_ACCESS), "TAG": describe_parser(TAG)}


def _target_sql(self: Generator, expression: exp.Expression) -> str:
    exists = " IF EXISTS" if expression.args.get("exists") else ""
    return f"ALTER {expression.text('kind')}{exists} {self.sql(expression, 'this')}"


def _create_policy_sql(self: Generator, expression: CreatePolicy) -> str:
    replace = " OR REPLACE" if expression.args.get("replace") else ""
    exists = " IF NOT EXISTS" if expression.args.get("exists") else ""
    text = f"CREATE{replace} {expression.text('kind')}{exists} {self.sql(expression, 'this')}"
    if expression.text("kind") == TAG:
        allowed = expression.args.get("allowed_values")
        if allowed:
            text += " ALLOWED_VALUES " + ", ".join(self.sql(value) for value in allowed)
    else:
        text += f" AS ({self.expressions(expression, flat=True)}) RETURNS {self.sql(expression, 'returns')}"
        text += f" -> {self.sql(expression, 'body')}"
    comment = self.sql(expression, "comment")
    return f"{text} COMMENT = {comment}" if comment else text


def _drop_policy_sql(self: Generator, expression: DropPolicy) -> str:
    exists = " IF EXISTS" if expression.args.get("exists") else ""
    return f"DROP {expression.text('kind')}{exists} {self.sql(expression, 'this')}"


def _alter_policy_sql(self: Generator, expression: AlterPolicy) -> str:
    verb = "UNSET" if expression.args.get("unset") else "SET"
    text = f"{_target_sql(self, expression)} {verb}"
    policies = expression.args.get("policies")
    if policies:
        return f"{text} MASKING POLICY " + ", ".join(self.sql(p) for p in policies)
    if expression.args.get("body"):
        return f"{text} BODY -> {self.sql(expression, 'body')}"
    comment = self.sql(expression, "comment")
    return f"{text} COMMENT = {comment}" if comment else f"{text} COMMENT"


def _alter_column_policy_sql(self: Generator, expression: AlterColumnPolicy) -> str:
    text = f"{_target_sql(self, expression)} MODIFY COLUMN {self.sql(expression, 'column')}"
    if expression.args.get("unset"):
        return f"{text} UNSET MASKING POLICY"
    text += f" SET MASKING POLICY {self.sql(expression, 'policy')}"
    using = expression.args.get("using")
    if using:
        text += " USING (" + ", ".join(self.sql(c) for c in using) + ")"
    return f"{text} FORCE" if expression.args.get("force") else text


def _alter_row_access_policy_sql(self: Generator, expression: AlterRowAccessPolicy) -> str:
    if expression.args.get("drop"):
        return f"{_target_sql(self, expression)} DROP ROW ACCESS POLICY {self.sql(expression, 'policy')}"
    columns = self.expressions(expression, flat=True)
    return f"{_target_sql(self, expression)} ADD ROW ACCESS POLICY {self.sql(expression, 'policy')} ON ({columns})"


def _alter_tags_sql(self: Generator, expression: AlterTags) -> str:
    text = _target_sql(self, expression)
    column = self.sql(expression, "column")
    if column:
        text += f" MODIFY COLUMN {column}"
    verb = "UNSET" if expression.args.get("unset") else "SET"
    return f"{text} {verb} TAG {self.expressions(expression, flat=True)}"


TRANSFORMS: dict[type[exp.Expression], t.Callable[..., str]] = {
    CreatePolicy: _create_policy_sql,
    DropPolicy: _drop_policy_sql,
    AlterPolicy: _alter_policy_sql,
    AlterColumnPolicy: _alter_column_policy_sql,
    AlterRowAccessPolicy: _alter_row_access_policy_sql,
    AlterTags: _alter_tags_sql,
}
