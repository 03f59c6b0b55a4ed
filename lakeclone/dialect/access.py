"""lsql's access-control statements: users, roles, grants of roles and of privileges, SHOW GRANTS.

sqlglot's Snowflake dialect reads ``GRANT SELECT ON TABLE t TO ROLE r`` but
falls back to an opaque command for roles, users, ``ON ALL|FUTURE … IN SCHEMA``,
``GRANT OWNERSHIP … COPY CURRENT GRANTS`` and ``SHOW GRANTS``; lsql reads them
all into the nodes of :mod:`lakeclone.dialect.expressions`.
"""

from __future__ import annotations

import typing as t

from sqlglot import exp
from sqlglot.dialects.snowflake import Snowflake
from sqlglot.tokens import TokenType

from lakeclone.dialect.expressions import CreatePrincipal, DropPrincipal, GrantPrivileges, GrantRole, ShowGrants

if t.TYPE_CHECKING:
    from sqlglot.generator import Generator

PRINCIPALS = ("USER", "ROLE")

# Securables a grant names, by the word after ON; CATALOG is Unity Catalog's DATABASE.
SECURABLES = {
    "TABLE": "TABLE",
    "VIEW": "VIEW",
    "STREAM": "STREAM",
    "SEQUENCE": "SEQUENCE",
    "STAGE": "STAGE",
    "FILE FORMAT": "FILE FORMAT",
    "SCHEMA": "SCHEMA",
    "DATABASE": "DATABASE",
    "CATALOG": "DATABASE",
    "TAG": "TAG",
}

# Securables named by more than one word: the first word, and the words that must follow it.
MULTIWORD_SECURABLES = {"MASKING": ("POLICY",), "ROW": ("ACCESS", "POLICY")}

# ``ON ALL|FUTURE <plural> IN SCHEMA s``: the objects' kind by its plural.
PLURALS = {
    "TABLES": "TABLE",
    "VIEWS": "VIEW",
    "STREAMS": "STREAM",
    "SEQUENCES": "SEQUENCE",
    "STAGES": "STAGE",
    "SCHEMAS": "SCHEMA",
}


class AccessParser(Snowflake.Parser):
    """The access-control part of lsql's parser."""

    def _parse_word(self) -> str:
        if not self._curr:
            self.raise_error("Unexpected end of statement")
            return ""
        self._advance()
        return self._prev.text.upper()

    def _parse_principal_name(self) -> exp.Identifier:
        name = self._parse_id_var(any_token=False)
        if not isinstance(name, exp.Identifier):
            self.raise_error("Expected a name", self._curr)
            return exp.to_identifier("")
        return name

    def _parse_create(self) -> exp.Expression:
        index = self._index
        replace = self._match_pair(TokenType.OR, TokenType.REPLACE)
        if self._match_texts(PRINCIPALS):
            kind = self._prev.text.upper()
            exists = self._parse_exists(not_=True)
            return self.expression(CreatePrincipal(this=self._parse_principal_name(), kind=kind, replace=replace, exists=exists))
        self._retreat(index)
        return super()._parse_create()

    def _parse_drop(self, exists: bool = False, kind: str | None = None) -> exp.Drop | exp.Command:
        if kind is None and self._match_texts(PRINCIPALS):
            principal = self._prev.text.upper()
            if_exists = self._parse_exists()
            return self.expression(DropPrincipal(this=self._parse_principal_name(), kind=principal, exists=if_exists))
        return super()._parse_drop(exists=exists, kind=kind)

    def _parse_grant(self) -> exp.Expression:
        return self._parse_access_grant(revoke=False)

    def _parse_revoke(self) -> exp.Expression:
        return self._parse_access_grant(revoke=True)

    def _parse_access_grant(self, *, revoke: bool) -> exp.Expression:
        grant_option = revoke and self._match_text_seq("GRANT", "OPTION", "FOR")
        if self._match_text_seq("ROLE"):
            role = self._parse_principal_name()
            if not self._match_text_seq("FROM" if revoke else "TO"):
                self.raise_error("Expected FROM" if revoke else "Expected TO", self._curr)
            if not self._match_texts(PRINCIPALS):
                self.raise_error("Expected USER or ROLE", self._curr)
            kind = self._prev.text.upper()
            return self.expression(GrantRole(this=role, kind=kind, to=self._parse_principal_name(), revoke=revoke))
        privileges = self._parse_privileges()
        args: dict[str, t.Any] = {"expressions": privileges, "revoke": revoke}
        if self._match_text_seq("ACCOUNT"):
            args["kind"] = "ACCOUNT"
        elif self._match_texts(("ALL", "FUTURE")):
            args["scope"] = self._prev.text.upper()
            plural = self._parse_word()
            if plural not in PLURALS:
                self.raise_error("Expected TABLES, VIEWS, STREAMS, SEQUENCES, STAGES or SCHEMAS", self._prev)
            args["kind"] = PLURALS.get(plural, plural)
            if not self._match(TokenType.IN):
                self.raise_error("Expected IN", self._curr)
            container = self._parse_word()
            if container not in ("SCHEMA", "DATABASE"):
                self.raise_error("Expected SCHEMA or DATABASE", self._prev)
            args["container"] = container
            args["this"] = self._parse_table_parts(is_db_reference=container == "SCHEMA")
        else:
            args["kind"] = self._parse_securable_kind()
            args["this"] = self._parse_table_parts(is_db_reference=args["kind"] == "SCHEMA")
        if not self._match_text_seq("FROM" if revoke else "TO"):
            self.raise_error("Expected FROM" if revoke else "Expected TO", self._curr)
        self._match_text_seq("ROLE")
        args["to"] = self._parse_principal_name()
        if revoke:
            self._match_texts(("CASCADE", "RESTRICT"))
        elif self._match_text_seq("WITH", "GRANT", "OPTION"):
            grant_option = True
        elif self._match_texts(("COPY", "REVOKE")):
            args["copy_grants"] = self._prev.text.upper() == "COPY"
            if not self._match_text_seq("CURRENT", "GRANTS"):
                self.raise_error("Expected CURRENT GRANTS", self._curr)
        args["grant_option"] = grant_option
        return self.expression(GrantPrivileges(**args))

    def _parse_securable_kind(self) -> str:
        word = self._parse_word()
        if word in MULTIWORD_SECURABLES:
            rest = MULTIWORD_SECURABLES[word]
            if not self._match_text_seq(*rest):
                self.raise_error("Expected an object kind", self._curr)
            return " ".join((word, *rest))
        if word not in SECURABLES:
            self.raise_error("Expected an object kind", self._prev)
        return SECURABLES.get(word, word)

    def _parse_privileges(self) -> list[exp.Var]:
        privileges: list[exp.Var] = []
        while True:
            words: list[str] = []
            while self._curr and self._curr.token_type not in (TokenType.COMMA, TokenType.ON):
                words.append(self._parse_word())
            if not words:
                self.raise_error("Expected privilege", self._curr)
            privileges.append(exp.var(" ".join(words)))
            if not self._match(TokenType.COMMA):
                break
        if not self._match(TokenType.ON):
            self.raise_error("Expected ON", self._curr)
        return privileges

    def _parse_show_grants(self, *, future: bool) -> ShowGrants:
        if future:
            if not (self._match(TokenType.IN) and self._match_text_seq("SCHEMA")):
                self.raise_error("Expected IN SCHEMA", self._curr)
            return self.expression(ShowGrants(this=self._parse_table_parts(is_db_reference=True), on="SCHEMA", future=True))
        if self._match(TokenType.ON):
            if self._match_text_seq("ACCOUNT"):
                return self.expression(ShowGrants(on="ACCOUNT"))
            kind = self._parse_securable_kind()
            return self.expression(ShowGrants(this=self._parse_table_parts(is_db_reference=kind == "SCHEMA"), on=kind))
        if self._match_text_seq("TO"):
            if not self._match_texts(PRINCIPALS):
                self.raise_error("Expected ROLE or USER", self._curr)
            kind = self._prev.text.upper()
            return self.expression(ShowGrants(this=self._parse_principal_name(), to=kind))
        self.raise_error("Expected ON or TO", self._curr)
        return ShowGrants()


SHOW_PARSERS: dict[str, t.Callable[[AccessParser], exp.Expression]] = {
    "GRANTS": lambda self: self._parse_show_grants(future=False),
    "FUTURE GRANTS": lambda self: self._parse_show_grants(future=True),
}


def _create_principal_sql(self: Generator, expression: CreatePrincipal) -> str:
    replace = " OR REPLACE" if expression.args.get("replace") else ""
    exists = " IF NOT EXISTS" if expression.args.get("exists") else ""
    return f"CREATE{replace} {expression.text('kind')}{exists} {self.sql(expression, 'this')}"


def _drop_principal_sql(self: Generator, expression: DropPrincipal) -> str:
    exists = " IF EXISTS" if expression.args.get("exists") else ""
    return f"DROP {expression.text('kind')}{exists} {self.sql(expression, 'this')}"


def _grant_role_sql(self: Generator, expression: GrantRole) -> str:
    verb, to = ("REVOKE", "FROM") if expression.args.get("revoke") else ("GRANT", "TO")
    return f"{verb} ROLE {self.sql(expression, 'this')} {to} {expression.text('kind')} {self.sql(expression, 'to')}"


def _grant_privileges_sql(self: Generator, expression: GrantPrivileges) -> str:
    revoke = bool(expression.args.get("revoke"))
    option = bool(expression.args.get("grant_option"))
    text = "REVOKE GRANT OPTION FOR " if revoke and option else ("REVOKE " if revoke else "GRANT ")
    text += ", ".join(p.name for p in expression.expressions) + " ON "
    kind = expression.text("kind")
    scope = expression.text("scope")
    if scope:
        plural = next(p for p, k in PLURALS.items() if k == kind)
        text += f"{scope} {plural} IN {expression.text('container')} {self.sql(expression, 'this')}"
    elif kind == "ACCOUNT":
        text += "ACCOUNT"
    else:
        text += f"{kind} {self.sql(expression, 'this')}"
    text += f" {'FROM' if revoke else 'TO'} ROLE {self.sql(expression, 'to')}"
    if option and not revoke:
        text += " WITH GRANT OPTION"
    copy = expression.args.get("copy_grants")
    if copy is not None:
        text += " COPY CURRENT GRANTS" if copy else " REVOKE CURRENT GRANTS"
    return text


def _show_grants_sql(self: Generator, expression: ShowGrants) -> str:
    if expression.args.get("future"):
        return f"SHOW FUTURE GRANTS IN SCHEMA {self.sql(expression, 'this')}"
    if expression.text("to"):
        return f"SHOW GRANTS TO {expression.text('to')} {self.sql(expression, 'this')}"
    if expression.text("on") == "ACCOUNT":
        return "SHOW GRANTS ON ACCOUNT"
    return f"SHOW GRANTS ON {expression.text('on')} {self.sql(expression, 'this')}"


TRANSFORMS: dict[type[exp.Expression], t.Callable[..., str]] = {
    CreatePrincipal: _create_principal_sql,
    DropPrincipal: _drop_principal_sql,
    GrantRole: _grant_role_sql,
    GrantPrivileges: _grant_privileges_sql,
    ShowGrants: _show_grants_sql,
}
