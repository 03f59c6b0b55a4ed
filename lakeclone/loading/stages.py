"""CREATE, DROP, SHOW, DESCRIBE and LIST of stages: named external locations files are loaded from.

A stage names a folder on any FileSystem Hadoop reaches (``file:``,
``s3a:`` …) and, optionally, the file format options a COPY from it reads
with. The warehouse's own area and every table's folder are refused as a
stage's URL: reading a table's files directly would bypass its privileges and
policies.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from lakeclone.catalog.entries import ObjectKind
from lakeclone.catalog.stages import FileFormatEntry, StageEntry
from lakeclone.dialect import option_reference, table_reference
from lakeclone.engine import registry, results
from lakeclone.engine.objects import external_location, make_room, require_schema, value_of
from lakeclone.engine.privileges import Need, stage_usage
from lakeclone.errors import ObjectNotFoundError, SqlCompilationError
from lakeclone.loading import formats
from lakeclone.storage import FileInfo, Storage, join, relative_to

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeclone.engine.executor import Execution
    from lakeclone.engine.tables import Tables

SHOW_SCHEMA = (
    "created_on TIMESTAMP, name STRING, database_name STRING, schema_name STRING, url STRING, "
    "has_credentials STRING, owner STRING, comment STRING, type STRING"
)
DESCRIBE_SCHEMA = "parent_property STRING, property STRING, property_type STRING, property_value STRING, property_default STRING"
LIST_SCHEMA = "name STRING, size BIGINT, md5 STRING, last_modified STRING"

# Files whose checksums are computed at once.
CHECKSUM_THREADS = 4


@dataclass(frozen=True)
class Location:
    """Where a COPY or LIST reads: a stage's folder (and a path below it), or a URI given as text.

    Attributes:
        uri: the folder or file to read.
        root: what FILES and PATTERN are relative to: the stage's URL, or the URI given.
        stage: the stage named, if any.
        file_format: the stage's file format options (Snowflake's defaults without a stage).
    """

    uri: str
    root: str
    stage: StageEntry | None
    file_format: formats.FileFormat

    def relative(self, uri: str) -> str:
        return relative_to(uri, self.root)


def create_stage(execution: Execution) -> DataFrame:
    """``CREATE [OR REPLACE] STAGE [IF NOT EXISTS] s URL = '…' [FILE_FORMAT = (…)] [COMMENT = '…']``."""
    expression = execution.expression
    name = execution.tables.name(expression.this)
    url_text, file_format, comment = None, formats.FileFormat(), ""
    properties = expression.args.get("properties")
    stored: dict[str, str] | None = None
    for prop in properties.expressions if properties else []:
        if isinstance(prop, exp.FileFormatProperty):
            reference = formats.format_name(prop.expressions)
            if reference is not None:
                # The stage names the format: a COPY reads it as the format then is.
                stored = {"FORMAT_NAME": require_file_format(execution.tables, reference).qualified}
            else:
                file_format = formats.from_properties(file_format, prop.expressions)
        elif isinstance(prop, exp.SchemaCommentProperty):
            comment = value_of(prop.this)
        elif type(prop) is exp.Property and prop.name.upper() == "URL":
            url_text = value_of(prop.args["value"])
        else:
            raise SqlCompilationError(f"unsupported stage option {prop.sql(dialect='snowflake')}")
    if url_text is None:
        raise SqlCompilationError(
            "lakeclone's stages are external: give the folder its files are in, CREATE STAGE s URL = 's3a://bucket/path/'."
        )
    url = external_location(execution.tables, url_text, what="a stage")
    with execution.work.records():
        schema = require_schema(execution, name.database, name.schema)
        held = make_room(execution, ObjectKind.STAGE, name)
        if held is not None:
            return held
        options = stored or file_format.options()
        execution.catalog.stages.create_stage(
            schema, name.name, url=url, file_format=options, comment=comment, now=execution.now()
        )
    return results.status(execution.spark, f"Stage area {name.name} successfully created.")


def _show_row(execution: Execution, stage: StageEntry) -> tuple[Any, ...]:
    """SHOW STAGES' row."""
    owner = execution.catalog.access.owner(ObjectKind.STAGE, stage.id) or ""
    return (stage.created_at, stage.name, stage.database, stage.schema, stage.url, "N", owner, stage.comment, "EXTERNAL")


def describe_stage(execution: Execution) -> DataFrame:
    """``DESCRIBE STAGE s``: its location and file format options, as Snowflake lists them."""
    stage = require_stage(execution.tables, execution.expression.this)
    defaults = formats.FileFormat().options()
    data = [("STAGE_LOCATION", "URL", "String", stage.url, "")]
    data += [
        ("STAGE_FILE_FORMAT", option, "String", value, defaults.get(option, "")) for option, value in stage.file_format.items()
    ]
    return results.rows(execution.spark, DESCRIBE_SCHEMA, data)


def require_stage(tables: Tables, target: exp.Table) -> StageEntry:
    name = tables.name(target)
    stage = tables.catalog.stages.stage(name.database, name.schema, name.name)
    if stage is None:
        raise ObjectNotFoundError(str(name), "Stage")
    return stage


def require_file_format(tables: Tables, reference: exp.Expression) -> FileFormatEntry:
    """The named file format ``FORMAT_NAME = …`` names (``'db.s.f'`` or ``f``), resolved like any name."""
    name = tables.name(option_reference(reference))
    entry = tables.catalog.stages.file_format(name.database, name.schema, name.name)
    if entry is None:
        raise ObjectNotFoundError(str(name), "File format")
    return entry


def named_format(tables: Tables, reference: exp.Expression) -> formats.FileFormat:
    return formats.stored(require_file_format(tables, reference).options)


def stage_reference(text: str) -> tuple[exp.Table, str]:
    """``@db.s.stage/some/path`` as the stage's name and the path below it.

    Raises:
        SqlCompilationError: a user (``@~``) or table (``@%t``) stage, which lakeclone does not have.
    """
    body = text.removeprefix("@")
    if body.startswith(("~", "%")):
        raise SqlCompilationError(
            "User and table stages (@~, @%t) are not supported by lakeclone; "
            "name an external location with CREATE STAGE s URL = '…' and read @s."
        )
    name, _, path = body.partition("/")
    return table_reference(name), path.strip("/")


def stage_location(tables: Tables, text: str) -> Location:
    """Where ``@stage[/path]`` reads."""
    target, path = stage_reference(text)
    stage = require_stage(tables, target)
    # Checked again at each use: a table may have been created in the stage's folder since.
    external_location(tables, stage.url, what="a stage")
    named = stage.file_format.get("FORMAT_NAME")
    if named is not None:
        database, schema, name = named.split(".", 2)
        entry = tables.catalog.stages.file_format(database, schema, name)
        if entry is None:
            raise ObjectNotFoundError(named, "File format")
        file_format = formats.stored(entry.options)
    else:
        file_format = formats.stored(stage.file_format)
    return Location(join(stage.url, path) if path else stage.url, stage.url, stage, file_format)


def list_stage(execution: Execution) -> DataFrame:
    """``LIST @s[/path] [PATTERN = '<regex>']``: the files a COPY from there could load."""
    expression = execution.expression
    location = stage_location(execution.tables, expression.name)
    pattern = expression.args.get("pattern")
    regex = compile_pattern(value_of(pattern)) if pattern is not None else None
    files = [f for f in execution.storage.files_at(location.uri) if regex is None or regex.fullmatch(location.relative(f.uri))]
    data = [(f.uri, f.size, execution.storage.md5(f.uri), _http_date(f)) for f in sorted(files, key=lambda f: f.uri)]
    return results.rows(execution.spark, LIST_SCHEMA, data)


def checksums(storage: Storage, uris: Sequence[str]) -> dict[str, str]:
    """Each file's MD5, several files at a time (the JVM reads them; Python waits)."""
    with ThreadPoolExecutor(CHECKSUM_THREADS) as pool:
        return dict(zip(uris, pool.map(storage.md5, uris), strict=True))


def compile_pattern(text: str) -> re.Pattern[str]:
    try:
        return re.compile(text)
    except re.error as error:
        raise SqlCompilationError(f"Invalid regular expression '{text}': {error}") from None


def _http_date(info: FileInfo) -> str:
    """A file's modification time as Snowflake's LIST shows it: ``Sat, 28 Nov 2026 18:20:53 GMT``."""
    moment = dt.datetime.fromtimestamp(info.modified_ms / 1000, tz=dt.timezone.utc)
    return moment.strftime("%a, %d %b %Y %H:%M:%S GMT")


def _list_needs(tables: Tables, expression: exp.Expression) -> Iterator[Need | None]:
    """USAGE on the stage listed."""
    yield from stage_usage(tables, expression.name)


registry.schema_object(
    registry.SchemaObject(
        ObjectKind.STAGE,
        "STAGES",
        columns=SHOW_SCHEMA,
        row=_show_row,
        create=create_stage,
    )
)
registry.DESCRIBERS["STAGE"] = describe_stage
registry.STATEMENTS[exp.ListStage] = registry.Statement(_list_needs, list_stage, "LIST_FILES")
