"""lsql: Snowflake SQL plus the Delta Lake statements lakeclone runs.

The dialect extends sqlglot's Snowflake dialect through sqlglot's own dispatch
tables. :func:`parse` is the entry point for the engine: it splits a script
into statements, parses each one strictly (no silent fallback to
``exp.Command``) and reports errors the way Snowflake words them.
"""

from __future__ import annotations

import re
import typing as t
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.dialects.snowflake import Snowflake
from sqlglot.errors import ParseError, SqlglotError, TokenError
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers
from sqlglot.parser import SENTINEL_NONE
from sqlglot.parsers.snowflake import _show_parser
from sqlglot.tokens import Token, TokenType
from sqlglot.trie import new_trie

from lakeclone.dialect import access, policies
from lakeclone.dialect.expressions import (
    AlterClustering,
    AlterRecluster,
    CreateStream,
    DescribeDetail,
    DescribeHistory,
    Explain,
    LsqlClone,
    Optimize,
    Restore,
    SessionParameters,
    SetParameters,
    ShowParameters,
    UnsetParameters,
    Vacuum,
)
from lakeclone.errors import SqlCompilationError, SqlSyntaxError, UnsupportedStatementError

# Parses the action of an ALTER after the object name; gets the object's
# ``this``, ``kind`` and ``exists`` and returns None to leave it to sqlglot.
AlterActionParser = t.Callable[["LsqlParser", dict[str, t.Any]], exp.Expression | None]

_PARAMETER_ACTIONS: dict[str, AlterActionParser] = {
    "SET": lambda self, target: self._parse_set_tags(target, unset=False) or self._parse_set_parameters(target),
    "UNSET": lambda self, target: (
        self._parse_set_tags(target, unset=True)
        or self.expression(UnsetParameters(**target, expressions=self._parse_csv(self._parse_parameter_name)))
    ),
}

_TABLE_ACTIONS: dict[str, AlterActionParser] = {
    **_PARAMETER_ACTIONS,
    **policies.TABLE_ACTIONS,
    "SUSPEND RECLUSTER": lambda self, target: self.expression(
        AlterRecluster(this=target["this"], exists=target["exists"], suspend=True)
    ),
    "RESUME RECLUSTER": lambda self, target: self.expression(
        AlterRecluster(this=target["this"], exists=target["exists"], suspend=False)
    ),
    "CLUSTER BY": lambda self, target: self.expression(
        AlterClustering(
            this=target["this"],
            exists=target["exists"],
            expressions=self._parse_wrapped_csv(self._parse_column),
        )
    ),
    "DROP CLUSTERING KEY": lambda self, target: self.expression(
        AlterClustering(this=target["this"], exists=target["exists"], expressions=[])
    ),
}

# sqlglot parses ALTER TABLE ... RENAME TO but not the same for schemas and
# databases; lsql gives them the very node sqlglot builds for tables. Views
# take the same actions: parameters (as SetParameters, not sqlglot's AlterSet)
# and RENAME TO.
_CONTAINER_ACTIONS: dict[str, AlterActionParser] = {
    **_PARAMETER_ACTIONS,
    "RENAME TO": lambda self, target: self.expression(
        exp.Alter(**target, actions=[exp.AlterRename(this=self._parse_table_parts())])
    ),
}

# Views take policies and tags like tables.
_VIEW_ACTIONS: dict[str, AlterActionParser] = {**_CONTAINER_ACTIONS, **policies.TABLE_ACTIONS}


# EXPLAIN's output formats (Snowflake's USING …) and plan modes (Databricks').
EXPLAIN_FORMATS = ("TEXT", "TABULAR", "JSON")
EXPLAIN_MODES = ("EXTENDED", "FORMATTED", "CODEGEN", "COST")


class LsqlParser(policies.PolicyParser):
    """Snowflake's parser with lsql's statements and a strict statement grammar."""

    # Statements whose keyword is a plain word rather than a token type.
    WORD_STATEMENT_PARSERS: t.ClassVar[dict[str, t.Callable[[LsqlParser], exp.Expression]]] = {
        "OPTIMIZE": lambda self: self._parse_optimize(),
        "VACUUM": lambda self: self._parse_vacuum(),
        "RESTORE": lambda self: self._parse_restore(),
        "START": lambda self: self._parse_start_transaction(),
        "EXPLAIN": lambda self: self._parse_explain(),
    }

    STATEMENT_PARSERS = {
        **policies.PolicyParser.STATEMENT_PARSERS,
        # Snowflake's SET names a session variable; lsql has none, and sets session parameters (as ALTER SESSION SET).
        TokenType.SET: lambda self: self._parse_session_parameters(unset=False),
    }

    # Besides STATEMENT_PARSERS and commands, only a query may start a statement:
    # Snowflake rejects a bare expression such as `SELEC 1` at its first word.
    QUERY_START_TOKENS: t.ClassVar = {TokenType.SELECT, TokenType.WITH, TokenType.L_PAREN}

    ALTER_PARSERS = {
        **policies.PolicyParser.ALTER_PARSERS,
        "ALTER": lambda self: self._parse_column_changes(),
        "MODIFY": lambda self: self._parse_column_changes(),
    }

    DESCRIBE_PARSERS: t.ClassVar[dict[str, t.Callable[[LsqlParser], exp.Expression]]] = {
        "DETAIL": lambda self: self.expression(DescribeDetail(this=self._parse_table_parts())),
        "HISTORY": lambda self: self._parse_describe_history(),
        "STREAM": lambda self: self.expression(exp.Describe(this=self._parse_table_parts(), kind="STREAM")),
        **policies.DESCRIBE_PARSERS,
    }

    SHOW_PARSERS = {
        **Snowflake.Parser.SHOW_PARSERS,
        "PARAMETERS": lambda self: self._parse_show_parameters(),
        "STREAMS": _show_parser("STREAMS"),
        "TERSE STREAMS": _show_parser("STREAMS", terse=True),
        "TRANSACTIONS": _show_parser("TRANSACTIONS"),
        "ROLES": _show_parser("ROLES"),
        "USERS": _show_parser("USERS"),
        **access.SHOW_PARSERS,
        "CHANNELS": _show_parser("CHANNELS"),
        # Databricks' spelling of GET_DDL('TABLE', t).
        "CREATE TABLE": lambda self: self.expression(
            exp.Show(this="CREATE TABLE", scope=self._parse_table_parts(), scope_kind="TABLE")
        ),
        **policies.SHOW_PARSERS,
    }

    # Options of CREATE STREAM, each a boolean.
    STREAM_OPTIONS: t.ClassVar = ("APPEND_ONLY", "SHOW_INITIAL_ROWS")
    SHOW_TRIE = new_trie(key.split(" ") for key in SHOW_PARSERS)

    SHOW_PARAMETERS_SCOPES: t.ClassVar = {TokenType.TABLE, TokenType.SCHEMA, TokenType.DATABASE}

    ALTER_ACTION_PARSERS: t.ClassVar[dict[TokenType, dict[str, AlterActionParser]]] = {
        TokenType.TABLE: _TABLE_ACTIONS,
        TokenType.SCHEMA: _CONTAINER_ACTIONS,
        TokenType.DATABASE: _CONTAINER_ACTIONS,
        TokenType.VIEW: _VIEW_ACTIONS,
    }
    ALTER_ACTION_TRIES: t.ClassVar = {
        kind: new_trie(key.split(" ") for key in parsers) for kind, parsers in ALTER_ACTION_PARSERS.items()
    }

    CLONABLES: t.ClassVar = {TokenType.TABLE, TokenType.SCHEMA, TokenType.DATABASE}

    PARAMETER_VALUE_TOKENS: t.ClassVar = {
        TokenType.NUMBER,
        TokenType.STRING,
        TokenType.TRUE,
        TokenType.FALSE,
    }

    def raise_error(self, message: str, token: Token = SENTINEL_NONE) -> None:
        """Report an error, at the end of the statement when it stops short.

        sqlglot blames the last token of a statement that ends too early;
        Snowflake blames what follows it. A zero-width end-of-statement token
        just past the last one stands for that, and :func:`parse` names it.
        """
        if not token and not self._curr and self._prev:
            prev = self._prev
            token = Token(TokenType.SEMICOLON, "", prev.line, prev.col, prev.end + 1, prev.end)
        super().raise_error(message, token)

    def _warn_unsupported(self) -> None:
        # parse() turns every Command into an error, so sqlglot's warning is noise.
        pass

    def _parse_as_command(self, start: Token) -> exp.Command:
        # sqlglot swallows the rest of a statement it cannot follow into a Command.
        # Stopping at a plain word (no keyword of the dialect), as in CREATE TABL,
        # is a typo, which Snowflake reports as a syntax error at that word.
        if self._curr and self._curr.token_type == TokenType.VAR:
            self.raise_error("Unexpected word", self._curr)
        return super()._parse_as_command(start)

    def _parse_statement(self) -> exp.Expr | None:
        curr = self._curr
        if curr and curr.token_type == TokenType.VAR and self._match_texts(self.WORD_STATEMENT_PARSERS):
            return self.WORD_STATEMENT_PARSERS[self._prev.text.upper()](self)
        if (
            curr
            and curr.token_type not in self.STATEMENT_PARSERS
            and curr.token_type not in self.dialect.tokenizer_class.COMMANDS
            and curr.token_type not in self.QUERY_START_TOKENS
        ):
            self.raise_error("Invalid statement", curr)
        return super()._parse_statement()

    def _parse_start_transaction(self) -> exp.Transaction:
        if not self._match_text_seq("TRANSACTION"):
            self.raise_error("Expected TRANSACTION", self._curr)
        modes = []
        if self._match_text_seq("NAME"):
            modes.append(f"NAME {self._parse_id_var(any_token=False)}")
        return self.expression(exp.Transaction(modes=modes))

    def _parse_drop(self, exists: bool = False, kind: str | None = None) -> exp.Drop | exp.Command:
        # STREAM is no keyword of sqlglot's; its DROP reads like a SEQUENCE's.
        if kind is None and self._curr and self._curr.text.upper() == "STREAM":
            self._advance()
            drop = super()._parse_drop(exists=exists, kind="STREAM")
            if isinstance(drop, exp.Drop) and isinstance(drop.args.get("tables"), exp.Table):
                drop.set("tables", [drop.args["tables"]])
            return drop
        return super()._parse_drop(exists=exists, kind=kind)

    def _parse_delete(self) -> exp.Delete:
        # sqlglot also reads MySQL's multi-table ``DELETE t1 FROM …``, which
        # Snowflake has not: there, a DELETE's next word is FROM.
        if not self._match(TokenType.FROM, advance=False):
            self.raise_error("Expected FROM", self._curr)
        return super()._parse_delete()

    def _parse_optimize(self) -> Optimize:
        this = self._parse_table_parts()
        zorder = None
        if self._match_text_seq("ZORDER", "BY"):
            # Delta writes the columns in parentheses; Databricks takes them without too.
            if self._match(TokenType.L_PAREN):
                zorder = self._parse_csv(self._parse_column)
                self._match_r_paren()
            else:
                zorder = self._parse_csv(self._parse_column)
        return self.expression(Optimize(this=this, zorder=zorder))

    def _parse_vacuum(self) -> Vacuum:
        this = self._parse_table_parts()
        retain = None
        if self._match_text_seq("RETAIN"):
            retain = self._parse_number()
            if not retain or not self._match_text_seq("HOURS"):
                self.raise_error("Expected RETAIN <number> HOURS")
        dry_run = self._match_text_seq("DRY", "RUN")
        return self.expression(Vacuum(this=this, retain=retain, dry_run=dry_run))

    def _parse_show_snowflake(self, this: str, terse: bool = False, iceberg: bool = False) -> exp.Show:
        # SHOW TABLES TERSE, with TERSE where other systems put their options: Snowflake's SHOW TERSE TABLES.
        terse = self._match_text_seq("TERSE") or terse
        return super()._parse_show_snowflake(this, terse=terse, iceberg=iceberg)

    def _parse_explain(self) -> Explain:
        using = mode = None
        if self._match(TokenType.USING):
            if not self._match_texts(EXPLAIN_FORMATS):
                self.raise_error("Expected TEXT, TABULAR or JSON", self._curr)
            using = self._prev.text.upper()
        elif self._match_texts(EXPLAIN_MODES):
            mode = self._prev.text.upper()
        statement = self._parse_statement()
        if statement is None:
            self.raise_error("Expected a statement to explain", self._curr)
        return self.expression(Explain(this=statement, using=using, mode=mode))

    def _parse_restore(self) -> Restore:
        self._match(TokenType.TABLE)
        table = self._parse_table_parts()
        self._match_text_seq("TO")
        version = self._parse_version()
        if version is None or version.text("kind") != "AS OF":
            self.raise_error("Expected VERSION AS OF or TIMESTAMP AS OF", self._curr)
        table.set("version", version)
        return self.expression(Restore(this=table))

    def _parse_describe(self) -> exp.Expression:
        # A following dot makes HISTORY or DETAIL the name of what is described.
        if self._next and self._next.token_type != TokenType.DOT and self._match_texts(self.DESCRIBE_PARSERS):
            return self.DESCRIBE_PARSERS[self._prev.text.upper()](self)
        return super()._parse_describe()

    def _parse_describe_history(self) -> DescribeHistory:
        this = self._parse_table_parts()
        limit = None
        if self._match(TokenType.LIMIT):
            limit = self._parse_number()
            if not limit:
                self.raise_error("Expected a number")
        return self.expression(DescribeHistory(this=this, limit=limit))

    def _parse_show_parameters(self) -> ShowParameters:
        like = self._parse_string() if self._match(TokenType.LIKE) else None
        kind = this = None
        if self._match(TokenType.IN):
            if self._match_text_seq("SESSION"):
                kind = "SESSION"
            elif not self._match_set(self.SHOW_PARAMETERS_SCOPES):
                self.raise_error("Expected SESSION, TABLE, SCHEMA or DATABASE")
            else:
                kind = self._prev.text.upper()
                this = self._parse_table_parts()
        return self.expression(ShowParameters(this=this, kind=kind, like=like))

    def _parse_column_changes(self) -> list[exp.Expr]:
        """Snowflake's ``{ALTER | MODIFY} [(] [COLUMN] a …, [COLUMN] b … [)]``: one action per column change.

        Each change after a comma may repeat ``ALTER`` or ``MODIFY``, as other dialects spell the list.
        """
        wrapped = self._match(TokenType.L_PAREN)
        changes = [self._parse_alter_table_alter()]
        while True:
            before = self._index
            if not self._match(TokenType.COMMA):
                break
            self._match_texts(("ALTER", "MODIFY"))
            if self._curr is not None and self._curr.text.upper() in self.ALTER_PARSERS:
                # Another kind of action (ADD, DROP …) after column changes: the statement is not one lsql runs.
                self._retreat(before)
                break
            changes.append(self._parse_alter_table_alter())
        if wrapped:
            self._match_r_paren()
        return [change for change in changes if change is not None]

    def _parse_alter_table_alter(self) -> exp.Expr | None:
        # Snowflake's ALTER [COLUMN] c UNSET COMMENT: the column's comment set to none, as COMMENT '' sets it.
        index = self._index
        self._match(TokenType.COLUMN)
        column = self._parse_field(any_token=True)
        if column is not None and self._match_text_seq("UNSET", "COMMENT"):
            return self.expression(exp.AlterColumn(this=column, comment=exp.Literal.string("")))
        self._retreat(index)
        return super()._parse_alter_table_alter()

    def _parse_alter(self) -> exp.Expression:
        index = self._index
        if self._match_text_seq("SESSION"):
            if self._match(TokenType.SET):
                return self._parse_session_parameters(unset=False)
            if self._match_text_seq("UNSET"):
                return self._parse_session_parameters(unset=True)
            self.raise_error("Expected SET or UNSET", self._curr)
        if self._match_set(self.ALTER_ACTION_PARSERS):
            kind = self._prev.token_type
            target = {
                "kind": self._prev.text.upper(),
                "exists": self._parse_exists(),
                "this": self._parse_table_parts(),
            }
            parser = self._find_parser(self.ALTER_ACTION_PARSERS[kind], self.ALTER_ACTION_TRIES[kind])
            action = parser(self, target) if parser else None
            if action:
                return action
        self._retreat(index)
        return super()._parse_alter()

    def _parse_set_parameters(self, target: dict[str, t.Any]) -> SetParameters | None:
        # Only `SET name = value ...`; other SETs (such as SET TAG) are sqlglot's.
        properties = []
        while self._next and self._next.token_type == TokenType.EQ:
            name = self._parse_parameter_name()
            self._match(TokenType.EQ)
            value = self._parse_parameter_value()
            properties.append(self.expression(exp.Property(this=name, value=value)))
            self._match(TokenType.COMMA)
        if not properties:
            return None
        return self.expression(SetParameters(**target, expressions=properties))

    def _parse_session_parameters(self, *, unset: bool) -> SessionParameters:
        settings: list[exp.Expression] = []
        while True:
            name = self._parse_session_parameter_name()
            if unset:
                settings.append(name)
            else:
                if not self._match(TokenType.EQ):
                    self.raise_error("Expected =", self._curr)
                settings.append(self.expression(exp.Property(this=name, value=self._parse_parameter_value())))
            if not self._match(TokenType.COMMA):
                return self.expression(SessionParameters(expressions=settings, unset=unset))

    def _parse_session_parameter_name(self) -> exp.Var:
        # A session parameter is a Snowflake keyword (LOCK_TIMEOUT) or one of Delta's dotted settings.
        words = []
        while True:
            if not self._curr or self._curr.token_type in (TokenType.EQ, TokenType.COMMA, TokenType.SEMICOLON):
                self.raise_error("Expected a parameter name", self._curr)
            self._advance()
            words.append(self._prev.text.upper())
            if not self._match(TokenType.DOT):
                return exp.var(".".join(words))

    def _parse_parameter_name(self) -> exp.Var | None:
        # Parameter names are keywords to Snowflake, never identifiers, so they
        # are upper-cased here and identifier normalization leaves them alone.
        return self._parse_var(any_token=True, upper=True)

    def _parse_parameter_value(self) -> exp.Expression | None:
        # A signed number parses, so that its range is judged (and reported) with the parameter's own rules.
        if self._match(TokenType.DASH):
            if not self._match(TokenType.NUMBER):
                self.raise_error("Expected a number")
                return None
            return self.expression(exp.Neg(this=self.PRIMARY_PARSERS[TokenType.NUMBER](self, self._prev)))
        if not self._match_set(self.PARAMETER_VALUE_TOKENS):
            self.raise_error("Expected a number, a string, TRUE or FALSE")
            return None
        return self.PRIMARY_PARSERS[self._prev.token_type](self, self._prev)

    def _parse_create(self) -> exp.Expression:
        index = self._index
        self._match_pair(TokenType.OR, TokenType.REPLACE)
        policy = self._parse_policy_kind() is not None
        self._retreat(index)
        if policy:
            # Before the clone's reading of properties, which takes ROW and TAG for some of its own.
            return super()._parse_create()
        create = self._parse_create_clone()
        if create:
            return create
        self._retreat(index)
        stream = self._parse_create_stream()
        if stream:
            return stream
        self._retreat(index)
        created = super()._parse_create()
        if created.find(exp.CopyGrantsProperty):
            raise SqlCompilationError("COPY GRANTS is supported by lakeclone on CREATE TABLE … CLONE only.")
        return created

    def _parse_create_stream(self) -> CreateStream | None:
        """``CREATE [OR REPLACE] STREAM [IF NOT EXISTS] s ON {TABLE | VIEW} src [AT|BEFORE(...)] [options]``.

        Returns None, having consumed tokens, for any CREATE that is not a stream.
        """
        replace = self._match_pair(TokenType.OR, TokenType.REPLACE)
        if not self._match_text_seq("STREAM"):
            return None
        exists = self._parse_exists(not_=True)
        this = self._parse_table_parts()
        if not self._match(TokenType.ON):
            self.raise_error("Expected ON TABLE or ON VIEW", self._curr)
        if not self._match_set((TokenType.TABLE, TokenType.VIEW)):
            self.raise_error("Expected TABLE or VIEW", self._curr)
        kind = self._prev.text.upper()
        source = self._parse_table_parts()
        when = self._parse_historical_data()
        if when is not None:
            source.set("when", when)
        options: dict[str, t.Any] = {}
        while self._curr and self._curr.token_type != TokenType.SEMICOLON:
            if self._match_texts(self.STREAM_OPTIONS):
                key = self._prev.text.lower()
                self._match(TokenType.EQ)
                if not self._match_set((TokenType.TRUE, TokenType.FALSE)):
                    self.raise_error("Expected TRUE or FALSE", self._curr)
                options[key] = self._prev.token_type == TokenType.TRUE
            elif self._match(TokenType.COMMENT):
                self._match(TokenType.EQ)
                options["comment"] = self._parse_string()
                if options["comment"] is None:
                    self.raise_error("Expected a string", self._curr)
            else:
                self.raise_error("Unexpected option", self._curr)
                break
        return self.expression(CreateStream(this=this, kind=kind, source=source, replace=replace, exists=exists, **options))

    def _parse_create_clone(self) -> exp.Create | None:
        """``CREATE [OR REPLACE] [TRANSIENT] kind [IF NOT EXISTS] name [SHALLOW|DEEP] CLONE src``.

        sqlglot reads Snowflake's ``CLONE`` but neither ``DEEP CLONE`` nor a
        ``VERSION AS OF`` after the source, so lsql reads every clone itself and
        builds one node, :class:`LsqlClone`, for all of them. Returns None, having
        consumed tokens, for any CREATE that is not a clone.
        """
        replace = self._match_pair(TokenType.OR, TokenType.REPLACE)
        properties = self._parse_properties()  # such as TRANSIENT
        if not self._match_set(self.CLONABLES):
            return None
        kind = self._prev
        exists = self._parse_exists(not_=True)
        # Same shapes as sqlglot's CREATE without CLONE: a schema's name is its `db`.
        this = self._parse_table_parts(schema=True, is_db_reference=kind.token_type == TokenType.SCHEMA)
        if self._match(TokenType.L_PAREN, advance=False):
            return None  # a column list: no clone, which takes its source's columns
        # Options (LOCATION = '…', COMMENT = '…') may come before CLONE or after its source.
        before = self._parse_properties()
        shallow = self._match_text_seq("SHALLOW")
        deep = not shallow and self._match_text_seq("DEEP")
        if not self._match_text_seq("CLONE"):
            return None

        source = self._parse_table_parts(schema=True)
        source.set("version", self._parse_version())
        after = self._parse_properties()
        options = [p for group in (properties, before, after) if group for p in group.expressions]
        properties = exp.Properties(expressions=options) if options else None
        return self.expression(
            exp.Create(
                this=this,
                kind=kind.text.upper(),
                replace=replace,
                exists=exists,
                properties=properties,
                clone=self.expression(LsqlClone(this=source, shallow=shallow, deep=deep)),
            )
        )


def _lsql_clone_sql(self: LsqlGenerator, expression: LsqlClone) -> str:
    depth = "SHALLOW " if expression.args.get("shallow") else ""
    depth = "DEEP " if expression.args.get("deep") else depth
    return f"{depth}CLONE {self.sql(expression, 'this')}"


def _create_stream_sql(self: LsqlGenerator, expression: CreateStream) -> str:
    replace = " OR REPLACE" if expression.args.get("replace") else ""
    exists = " IF NOT EXISTS" if expression.args.get("exists") else ""
    text = f"CREATE{replace} STREAM{exists} {self.sql(expression, 'this')} ON {expression.text('kind')} "
    text += self.sql(expression, "source")
    for option in ("append_only", "show_initial_rows"):
        value = expression.args.get(option)
        if value is not None:
            text += f" {option.upper()} = {'TRUE' if value else 'FALSE'}"
    comment = self.sql(expression, "comment")
    return f"{text} COMMENT = {comment}" if comment else text


def _describe_history_sql(self: LsqlGenerator, expression: DescribeHistory) -> str:
    limit = self.sql(expression, "limit")
    limit = f" LIMIT {limit}" if limit else ""
    return f"DESCRIBE HISTORY {self.sql(expression, 'this')}{limit}"


def _show_parameters_sql(self: LsqlGenerator, expression: ShowParameters) -> str:
    like = self.sql(expression, "like")
    like = f" LIKE {like}" if like else ""
    kind, scope = expression.text("kind"), self.sql(expression, "this")
    scope = f" IN {kind} {scope}" if scope else (f" IN {kind}" if kind else "")
    return f"SHOW PARAMETERS{like}{scope}"


def _alter_target_sql(self: LsqlGenerator, expression: exp.Expression, kind: str) -> str:
    exists = " IF EXISTS" if expression.args.get("exists") else ""
    return f"ALTER {kind}{exists} {self.sql(expression, 'this')}"


def _set_parameters_sql(self: LsqlGenerator, expression: SetParameters) -> str:
    settings = " ".join(f"{self.sql(p, 'this')} = {self.sql(p, 'value')}" for p in expression.expressions)
    return f"{_alter_target_sql(self, expression, expression.text('kind'))} SET {settings}"


def _unset_parameters_sql(self: LsqlGenerator, expression: UnsetParameters) -> str:
    names = self.expressions(expression, flat=True)
    return f"{_alter_target_sql(self, expression, expression.text('kind'))} UNSET {names}"


def _session_parameters_sql(self: LsqlGenerator, expression: SessionParameters) -> str:
    if expression.args.get("unset"):
        return f"ALTER SESSION UNSET {self.expressions(expression, flat=True)}"
    settings = ", ".join(f"{self.sql(p, 'this')} = {self.sql(p, 'value')}" for p in expression.expressions)
    return f"ALTER SESSION SET {settings}"


def _alter_recluster_sql(self: LsqlGenerator, expression: AlterRecluster) -> str:
    action = "SUSPEND" if expression.args.get("suspend") else "RESUME"
    return f"{_alter_target_sql(self, expression, 'TABLE')} {action} RECLUSTER"


def _alter_clustering_sql(self: LsqlGenerator, expression: AlterClustering) -> str:
    columns = self.expressions(expression, flat=True)
    action = f"CLUSTER BY ({columns})" if columns else "DROP CLUSTERING KEY"
    return f"{_alter_target_sql(self, expression, 'TABLE')} {action}"


def _optimize_sql(self: LsqlGenerator, expression: Optimize) -> str:
    zorder = expression.args.get("zorder")
    columns = f" ZORDER BY ({self.expressions(expression, key='zorder', flat=True)})" if zorder else ""
    return f"OPTIMIZE {self.sql(expression, 'this')}{columns}"


def _restore_sql(self: LsqlGenerator, expression: Restore) -> str:
    table = expression.this.copy()
    version = table.args.get("version")
    table.set("version", None)
    return f"RESTORE TABLE {self.sql(table)} TO {self.sql(version)}"


def _explain_sql(self: LsqlGenerator, expression: Explain) -> str:
    using = f"USING {expression.text('using')} " if expression.text("using") else ""
    mode = f"{expression.text('mode')} " if expression.text("mode") else ""
    return f"EXPLAIN {using}{mode}{self.sql(expression, 'this')}"


def _vacuum_sql(self: LsqlGenerator, expression: Vacuum) -> str:
    retain = self.sql(expression, "retain")
    retain = f" RETAIN {retain} HOURS" if retain else ""
    dry_run = " DRY RUN" if expression.args.get("dry_run") else ""
    return f"VACUUM {self.sql(expression, 'this')}{retain}{dry_run}"


class LsqlGenerator(Snowflake.Generator):
    """Snowflake's generator, writing lsql's statements and Delta's time travel."""

    TRANSFORMS = {
        **Snowflake.Generator.TRANSFORMS,
        **access.TRANSFORMS,
        **policies.TRANSFORMS,
        AlterClustering: _alter_clustering_sql,
        AlterRecluster: _alter_recluster_sql,
        CreateStream: _create_stream_sql,
        DescribeDetail: lambda self, e: f"DESCRIBE DETAIL {self.sql(e, 'this')}",
        DescribeHistory: _describe_history_sql,
        LsqlClone: _lsql_clone_sql,
        Optimize: _optimize_sql,
        Restore: _restore_sql,
        SessionParameters: _session_parameters_sql,
        SetParameters: _set_parameters_sql,
        ShowParameters: _show_parameters_sql,
        UnsetParameters: _unset_parameters_sql,
        Vacuum: _vacuum_sql,
        Explain: _explain_sql,
    }

    def show_sql(self, expression: exp.Show) -> str:
        if expression.name == "CREATE TABLE":
            return f"SHOW CREATE TABLE {self.sql(expression, 'scope')}"
        return super().show_sql(expression)

    def version_sql(self, expression: exp.Version) -> str:
        """Write ``VERSION AS OF 3`` as Delta users do, not SQL:2011's ``FOR VERSION AS OF 3``."""
        if expression.text("kind") == "AS OF":
            return f"{expression.name} AS OF {self.sql(expression, 'expression')}"
        return super().version_sql(expression)


class Lsql(Snowflake):
    """The lsql dialect: Snowflake SQL with Delta Lake's maintenance and clone syntax."""

    class Tokenizer(Snowflake.Tokenizer):
        # sqlglot tokenizes these as opaque commands; lsql parses their arguments.
        KEYWORDS = {
            word: token for word, token in Snowflake.Tokenizer.KEYWORDS.items() if word not in {"OPTIMIZE", "VACUUM", "EXPLAIN"}
        }

    Parser = LsqlParser
    Generator = LsqlGenerator


@dataclass(frozen=True)
class ParsedStatement:
    """One statement of a script.

    Attributes:
        expression: its syntax tree, unquoted identifiers upper-cased as Snowflake resolves them.
        sql: its original text, stripped, without the terminating ``;``.
    """

    expression: exp.Expression
    sql: str


def parse(text: str) -> list[ParsedStatement]:
    """Parse an lsql script into its statements, skipping empty ones.

    Args:
        text: one or more statements separated by ``;``.

    Returns:
        The statements in order.

    Raises:
        SqlSyntaxError: the text is not valid lsql.
        UnsupportedStatementError: a statement is valid Snowflake SQL that lsql does not support.
        SqlCompilationError: sqlglot failed in some other way on the text.
    """
    _check_encodable(text)
    dialect = Lsql()
    try:
        tokens = dialect.tokenize(text)
    except TokenError:
        # sqlglot does not say which token failed; it is an unterminated string,
        # identifier or comment, so the text ended where a token was still open.
        lines = text.split("\n")
        raise SqlSyntaxError(len(lines), len(lines[-1]), "<EOF>") from None

    statements = []
    for chunk, terminator, begin in _split(tokens):
        sql = text[begin : terminator.start if terminator else len(text)].strip()
        _check_size(chunk)
        try:
            expression = dialect.parser().parse(chunk, text)[0]
        except ParseError as error:
            if error.errors:
                raise _syntax_error(error.errors[0], terminator) from None
            raise SqlCompilationError(_plain(str(error))) from None
        except SqlglotError as error:
            raise SqlCompilationError(_plain(str(error))) from None
        except RecursionError:
            raise SqlCompilationError(
                "The statement is too deeply nested to parse; split its expressions into smaller ones."
            ) from None
        except (ValueError, TypeError) as error:
            # sqlglot raises these on some malformed input; callers expect only lakeclone's errors.
            raise SqlCompilationError(f"cannot parse: {_plain(str(error))}") from None
        if not isinstance(expression, exp.Expression) or expression.find(exp.Command):
            raise UnsupportedStatementError(sql)
        statements.append(ParsedStatement(_named_tables(normalize_identifiers(expression, dialect=dialect)), sql))
    return statements


def _named_tables(expression: exp.Expression) -> exp.Expression:
    """``expression`` with each ``IDENTIFIER('name')`` or ``TABLE('name')`` in a table's place written as that name.

    Snowflake reads ``FROM IDENTIFIER('t')`` and ``FROM TABLE('t')`` as
    ``FROM t``; left as they are, they would reach Spark as names no binder,
    privilege check or policy saw.

    Raises:
        SqlCompilationError: the IDENTIFIER's argument is no string literal.
    """
    for table in list(expression.find_all(exp.Table)):
        dynamic = table.this
        if not isinstance(dynamic, exp.DynamicIdentifier):
            continue
        if dynamic.expressions or not (isinstance(dynamic.this, exp.Literal) and dynamic.this.is_string):
            raise SqlCompilationError("IDENTIFIER in a table's place takes one string literal: IDENTIFIER('db.s.t').")
        named = table_reference(dynamic.this.name)
        for key, value in table.args.items():
            if key not in ("this", "db", "catalog") and value is not None:
                named.set(key, value)
        table.replace(named)
    for rows in list(expression.find_all(exp.TableFromRows)):
        if isinstance(rows.this, exp.Literal) and rows.this.is_string:
            named = table_reference(rows.this.name)
        elif isinstance(rows.this, exp.Column):
            column = rows.this
            named = exp.Table(this=column.this, db=column.args.get("table"), catalog=column.args.get("db"))
        else:
            continue
        for key, value in rows.args.items():
            if key != "this" and value is not None:
                named.set(key, value)
        rows.replace(named)
    return expression


MAX_CONNECTIVES = 1000
"""Most ANDs and ORs one statement may hold.

Spark plans a chain of them in time that grows much faster than its length
(5,000 ANDs: minutes), so a statement past this is refused before it is
parsed; a long list of alternatives reads better as IN (...) or a join anyway.
"""


def _check_size(tokens: list[Token]) -> None:
    connectives = sum(1 for token in tokens if token.token_type in (TokenType.AND, TokenType.OR))
    if connectives > MAX_CONNECTIVES:
        raise SqlCompilationError(
            f"The statement has {connectives} ANDs and ORs, more than the {MAX_CONNECTIVES} lakeclone plans; "
            "write long lists of alternatives as IN (...) or a join with a table of values."
        )


def option_reference(value: exp.Expression) -> exp.Table:
    """The object an option's value names (``FORMAT_NAME = f``, ``FILE_FORMAT => 'db.s.f'``): a name or its text."""
    if isinstance(value, exp.Table):
        return value
    if isinstance(value, exp.Literal) and value.is_string:
        return table_reference(value.name)
    return table_reference(value.sql(dialect="snowflake"))


def table_reference(text: str) -> exp.Table:
    """A name given as text (``'db.s.t'``), parsed and normalized as the same name written in a statement.

    Raises:
        SqlCompilationError: the text is no valid name.
    """
    try:
        reference = exp.to_table(text, dialect=Lsql)
    except (ParseError, TokenError):
        raise SqlCompilationError(f"invalid name '{text}'") from None
    normalized = normalize_identifiers(reference, dialect=Lsql)
    assert isinstance(normalized, exp.Table)
    return normalized


def _check_encodable(text: str) -> None:
    """Refuse text that is not valid Unicode: a lone surrogate is a Python str but no UTF-8 at all.

    Spark, Delta's log and the catalog all hold UTF-8, so such a statement could
    reach none of them.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        bad = error.object[error.start : error.end].encode("utf-8", "backslashreplace").decode("ascii")
        raise SqlCompilationError(f"Invalid UTF8 detected in string '{bad}'") from None


# sqlglot underlines the offending token with terminal escape codes.
_TERMINAL_ESCAPES = re.compile(r"\x1b\[[0-9;]*m")


def _plain(message: str) -> str:
    """sqlglot's message without terminal escape codes."""
    return _TERMINAL_ESCAPES.sub("", message)


def _split(tokens: list[Token]) -> t.Iterator[tuple[list[Token], Token | None, int]]:
    """Group tokens into statements as sqlglot does, skipping empty ones.

    Yields each statement's tokens, its ``;`` if it has one, and the offset in
    the text where it begins (just after the previous ``;``), so that its text
    keeps its comments.
    """
    chunk: list[Token] = []
    begin = 0
    for token in tokens:
        if token.token_type != TokenType.SEMICOLON:
            chunk.append(token)
            continue
        if chunk:
            yield chunk, token, begin
        chunk = []
        begin = token.end + 1
    if chunk:
        yield chunk, None, begin


def _syntax_error(detail: dict[str, t.Any], terminator: Token | None) -> SqlSyntaxError:
    """Word one of sqlglot's ParseError details as Snowflake does."""
    line, col, token = detail["line"], detail["col"], detail["highlight"]
    if token:
        # sqlglot's col is the 1-based column of the token's last character.
        return SqlSyntaxError(line, col - len(token), token)
    # The statement stopped short (see LsqlParser.raise_error): blame its `;`, else the end.
    if terminator:
        return SqlSyntaxError(terminator.line, terminator.col - 1, ";")
    return SqlSyntaxError(line, col, "<EOF>")
