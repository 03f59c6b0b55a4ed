"""The Lake: a warehouse, a SparkSession with Delta, a clock, and a SQL session on them."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from lakeclone.clock import Clock, system_clock
from lakeclone.errors import LakecloneError, public

if TYPE_CHECKING:
    import datetime as dt

    from pyspark.sql import DataFrame, SparkSession
    from sqlglot import exp

    from lakeclone.catalog.entries import ChannelEntry
    from lakeclone.channels import StreamingClient
    from lakeclone.clones.lineage import Lineage
    from lakeclone.engine.executor import Executor
    from lakeclone.information_schema.names import Name
    from lakeclone.vacuum.plan import VacuumPlan

WAREHOUSE_ENV = "LAKECLONE_WAREHOUSE"
DEFAULT_WAREHOUSE = "lakeclone-warehouse"
CATALOG_FILE = "catalog.sqlite"

_latest: Lake | None = None


@public
def connect(
    warehouse: str | os.PathLike[str] | None = None,
    spark: SparkSession | None = None,
    clock: Clock | None = None,
    *,
    catalog: str | os.PathLike[str] | None = None,
    progress: bool | None = None,
    user: str | None = None,
    role: str | None = None,
    compute_ahead: bool | None = None,
) -> Lake:
    """Open (creating if needed) a warehouse and start a SQL session on it.

    Statements that run Spark jobs for more than half a second (an INSERT, a
    MERGE, a DEEP CLONE, VACUUM, fetching a big result) show Spark's progress
    while they run, such as ``Spark: stage 3 · 12/40 tasks · 2.1 s``. In a
    Jupyter notebook that is a progress bar, removed when the statement ends;
    in a terminal nothing shows unless ``progress=True``, which shows it as one
    line on stderr. ``progress=False`` shows nothing anywhere; ``lake.progress``
    changes it later. Starting the embedded Spark session, which takes seconds
    once per process, says ``Starting Spark…`` in the same places.

    Args:
        warehouse: where managed tables live: a local folder or a URI Spark can
            reach, such as ``s3a://bucket/prefix`` on S3 or an S3-compatible server
            (credentials and the server's address from the usual AWS environment
            variables: see :func:`lakeclone.session.object_storage_settings`).
            Defaults to ``$LAKECLONE_WAREHOUSE``, else ``./lakeclone-warehouse``.
        spark: the SparkSession that does the compute, configured for Delta
            (see :func:`lakeclone.configure_spark`). Defaults to an embedded
            ``local[*]`` session tuned for interactive use.
        clock: a zero-argument callable returning a timezone-aware datetime. Every
            "now" (commit times, retention, UNDROP windows) comes from it.
        catalog: the folder on the driver's local disk for the catalog. Defaults
            to the warehouse folder itself when that is local; required otherwise.
        progress: where statements show Spark's progress: None (the default)
            in a Jupyter notebook only, True in a terminal (on stderr) too,
            False nowhere.
        user: who signs in; None is the warehouse's administrator, whose
            default role ACCOUNTADMIN may do everything.
        role: the session's role, which must be granted to the user. Defaults to
            ACCOUNTADMIN for the administrator and PUBLIC for anyone else.
        compute_ahead: whether, after a statement returns, a background thread
            has Delta compute the state of the tables it wrote, which the next
            statement on them would otherwise compute while you wait. None (the
            default): in a Jupyter notebook, where a person reads each result
            before the next cell; not in a script, whose statements follow each
            other at once.

    Returns:
        The Lake, which also becomes the one ``%%lsql`` cells use.

    Raises:
        SetupError: Java, Delta's jars or Delta's session settings are missing.

    Example:
        >>> lake = lakeclone.connect("/tmp/wh", clock=lakeclone.ManualClock())  # doctest: +SKIP
        >>> lake.sql("SELECT 1 AS one").collect()                                # doctest: +SKIP
        [Row(ONE=1)]
    """
    from lakeclone.errors import SetupError
    from lakeclone.progress import in_kernel, status
    from lakeclone.session import OBJECT_STORAGE_SCHEMES, active_session, embedded_spark, prepare, require_object_storage

    target = os.fspath(warehouse or os.environ.get(WAREHOUSE_ENV) or DEFAULT_WAREHOUSE)
    parts = urlsplit(target)
    scheme = parts.scheme
    if "@" in parts.netloc:
        # Hadoop refuses secrets in a URI, and the catalog records the warehouse's.
        raise SetupError("A warehouse's URI must not hold credentials; give them as AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.")
    if scheme == "s3":
        raise SetupError(f"Use s3a://{parts.netloc}{parts.path} for a warehouse on S3: lakeclone reaches S3 through S3A.")
    object_storage = scheme in OBJECT_STORAGE_SCHEMES
    if scheme and scheme != "file" and len(scheme) > 1:
        if catalog is None:
            raise SetupError(f"A warehouse at {target} needs catalog=<a local folder> for its catalog.")
        folder = Path(catalog).resolve()
        location = target
    else:
        folder = Path(unquote(urlsplit(target).path) if scheme == "file" else target).resolve()
        # Hadoop's form of a local folder: "file:" and the path as it is, not percent-encoded.
        location = f"file:{folder}"
    session = spark
    if session is None:
        # A cold start of the embedded session takes seconds: say so.
        starting = active_session() is None
        with status("Starting Spark…", progress) if starting else contextlib.nullcontext():
            session = embedded_spark(object_storage=object_storage)
    prepare(session)
    if object_storage:
        require_object_storage(session, target)
    lake = Lake(
        folder,
        location,
        session,
        clock or system_clock,
        progress=progress,
        user=user,
        role=role,
        compute_ahead=in_kernel() if compute_ahead is None else compute_ahead,
    )
    global _latest
    _latest = lake
    return lake


def latest() -> Lake | None:
    """The Lake most recently made by :func:`connect`, if any."""
    return _latest


class Lake:
    """A SQL session over one warehouse.

    Use :func:`connect` rather than building one directly.

    Attributes:
        warehouse: the local folder holding the catalog (and, for a local warehouse, the tables).
        location: where managed tables live, as a qualified URI.
        spark: the SparkSession doing the compute.
        clock: where every "now" comes from.
        progress: where statements show Spark's progress: None in a Jupyter
            notebook only, True in a terminal (on stderr) too, False nowhere.
            Set it at any time.
        lock_timeout: how many seconds a statement waits for a table another
            session's transaction holds before it fails (Snowflake's
            LOCK_TIMEOUT, 43200 by default). Set it at any time, here or with
            ``ALTER SESSION SET LOCK_TIMEOUT = n``.
        compute_ahead: whether the state of tables a statement wrote is computed
            in the background once it returns (see :func:`connect`).
    """

    def __init__(
        self,
        warehouse: Path,
        location: str,
        spark: SparkSession,
        clock: Clock,
        *,
        progress: bool | None = None,
        user: str | None = None,
        role: str | None = None,
        compute_ahead: bool = False,
    ) -> None:
        from lakeclone import features
        from lakeclone.engine.executor import Executor
        from lakeclone.spark_errors import spark_errors
        from lakeclone.storage import Storage

        features.load()
        self.warehouse = warehouse
        self.spark = spark
        self.clock = clock
        self.progress = progress
        self.user = user
        self.role = role
        self.compute_ahead = compute_ahead
        storage = Storage(spark)
        self.location = storage.qualify(location)
        with spark_errors():  # the first request to object storage: a missing bucket, refused keys, a server down
            storage.mkdirs(self.location)
        self._closed = False
        self._executor: Executor = Executor(self)

    @property
    def lock_timeout(self) -> float:
        from lakeclone.engine import session_parameters

        return float(session_parameters.value(self._executor, session_parameters.LOCK_TIMEOUT))

    @lock_timeout.setter
    def lock_timeout(self, seconds: float) -> None:
        from lakeclone.engine import session_parameters

        session_parameters.set_value(self._executor, session_parameters.LOCK_TIMEOUT, seconds)

    @property
    def catalog_path(self) -> Path:
        return self.warehouse / CATALOG_FILE

    def now(self) -> dt.datetime:
        """The current time by the Lake's clock."""
        return self.clock()

    @public
    def sql(self, text: str) -> DataFrame:
        """Run one or more ``;``-separated statements.

        Args:
            text: lsql statements.

        Returns:
            The last statement's result. DDL and DML return a small status frame,
            such as Snowflake's ``number of rows inserted``.

        Raises:
            LakecloneError: on any failure. A failed statement changes nothing;
                earlier statements of the same text stay done.
        """
        self._require_open()
        return self._executor.run(text)

    @public
    def run_statement(self, statement: exp.Expression, *, label: str) -> DataFrame:
        """Run a statement a feature's Python API states as an expression, not as SQL text.

        The statement's kind is registered by its feature as SQL statements'
        are: it is checked against this Lake's role for what it needs and run
        as one unit of work, with a query id in the query history. A streaming
        client's channel flushes run this way.

        Args:
            statement: an expression of a registered statement kind.
            label: what the query history records as the statement's text.

        Raises:
            LakecloneError: on any failure, as :meth:`sql` raises; an
                unregistered kind is UnsupportedStatementError.
        """
        self._require_open()
        return self._executor.run_statement(statement, label)

    @public
    def worksheet(self, *, progress: bool | None = None, compute_ahead: bool | None = None) -> Lake:
        """Another session on this warehouse as this session's user, in its current role: a second worksheet.

        It has a Spark session and a catalog connection of its own, so its
        statements may run in another thread beside this session's, each one a
        unit of work of its own. It starts with this session's clock and lock
        timeout, in the default database and schema; from then on its settings
        (``USE``, ``ALTER SESSION``) are its own. A streaming client runs its
        channels' commits in one.

        Args:
            progress: where its statements show Spark's progress (see
                :func:`connect`); None: where this session's do.
            compute_ahead: whether it computes the state of tables it wrote
                in the background (see :func:`connect`); None: as this session does.

        Example:
            >>> loader = lake.worksheet()                                   # doctest: +SKIP
            >>> threading.Thread(target=loader.sql, args=("COPY INTO t FROM @s",)).start()  # doctest: +SKIP
        """
        from lakeclone.session import prepare

        self._require_open()
        spark = self.spark.newSession()
        prepare(spark)
        sheet = Lake(
            self.warehouse,
            self.location,
            spark,
            self.clock,
            progress=self.progress if progress is None else progress,
            user=self.current_user,
            role=self.current_role,
            compute_ahead=self.compute_ahead if compute_ahead is None else compute_ahead,
        )
        sheet.lock_timeout = self.lock_timeout
        return sheet

    @public
    def channel_state(self, channel_id: str) -> ChannelEntry | None:
        """A channel's record in the catalog as it stands now, by the id its handle holds (None: no such channel).

        It reads on a catalog connection apart from the statements', so it
        never waits for one running in another thread (a channel's flush),
        nor sees one half done: a channel's handle checks with it that no
        other handle took the channel over, and reads its counts.
        """
        self._require_open()
        return self._executor.read_apart(lambda catalog: catalog.channels.channel_by_id(channel_id))

    def close(self) -> None:
        """End this Lake's session: other sessions see it gone, and its statements fail from now on."""
        if not self._closed:
            self._closed = True
            self._executor.close()

    def _require_open(self) -> None:
        if self._closed:
            raise LakecloneError("This Lake's session is closed: connect again.")

    @public
    def lineage(self, name: str) -> Lineage:
        """The clone lineage around a table: its sources, its clones, and the files they share.

        Tables the session's role may not see are shown as placeholders named ``<not authorized>``.

        Example:
            >>> lake.sql("CREATE TABLE dev CLONE prod")      # doctest: +SKIP
            >>> lake.lineage("dev").node("LAKE.PUBLIC.PROD").kind  # doctest: +SKIP
            'TABLE'
        """
        from lakeclone.clones.lineage import lineage
        from lakeclone.engine import registry
        from lakeclone.spark_errors import spark_errors

        executor = self._executor
        with spark_errors():
            graph = lineage(executor.catalog, executor.delta, executor.resolve(name))
        authorizer = registry.SLOTS.authorizer
        if authorizer is None:
            return graph
        # Tables the role may not see stay in the graph as nameless placeholders.
        return graph.hiding(lambda table_id: authorizer.sees_table(executor, table_id))

    @public
    def vacuum_plan(self, name: str, *, retain_hours: float | None = None) -> VacuumPlan:
        """What ``VACUUM name [RETAIN n HOURS]`` would keep or delete, and why, without deleting anything."""
        from lakeclone.spark_errors import spark_errors
        from lakeclone.vacuum.plan import plan_for

        with spark_errors():
            return plan_for(self._executor, self._executor.resolve(name, privilege="MODIFY"), retain_hours=retain_hours)

    @public
    def names(self, *qualifier: str) -> list[Name]:
        """The names a statement may write after ``qualifier``, as this Lake's role sees them: what completion offers.

        Args:
            qualifier: the names written before, outermost first, as SQL reads them
                (an unquoted name in upper case): none for the databases, the
                current database's schemas and the current schema's tables,
                views and streams; ``"SHOP"`` for that database's schemas (or that
                schema's relations, or that relation's columns); ``"SHOP", "SALES"``
                for a schema's relations; three names for a relation's columns.

        Example:
            >>> [(n.name, n.kind) for n in lake.names("LAKE", "PUBLIC")]  # doctest: +SKIP
            [('ORDERS', 'TABLE'), ('BIG_ORDERS', 'VIEW'), ('ORDERS_CHANGES', 'STREAM')]
        """
        from lakeclone.information_schema.names import names_after
        from lakeclone.spark_errors import spark_errors

        tables = self._executor.tables()
        try:
            with spark_errors():
                return names_after(tables, qualifier)
        finally:
            tables.close()  # a view's columns come from binding it, which may bind frames as temporary views

    @public
    def streaming_client(self, name: str) -> StreamingClient:
        """A client that opens channels on this Lake's tables, to push rows in with offset tokens.

        Use it as a context manager: leaving the block flushes and closes its channels.

        Example:
            >>> with lake.streaming_client("ingest") as client:                          # doctest: +SKIP
            ...     channel, status = client.open_channel("c1", table="orders")
            ...     channel.append_rows([{"id": 1}], offset_token="1")
            ...     channel.flush()
            >>> lake.sql("SHOW CHANNELS IN TABLE orders").first()["offset_token"]        # doctest: +SKIP
            '1'
        """
        from lakeclone.channels import StreamingClient

        return StreamingClient(self, name)

    @property
    def last_query_id(self) -> str | None:
        """The id of the last statement run, for ``BEFORE(STATEMENT => '<id>')``."""
        return self._executor.last_query_id

    @property
    def current_database(self) -> str | None:
        """The database unqualified names resolve in (``USE DATABASE``)."""
        return self._executor.context.database

    @property
    def current_schema(self) -> str | None:
        """The schema unqualified names resolve in (``USE SCHEMA``)."""
        return self._executor.context.schema

    @property
    def current_user(self) -> str:
        """The user this Lake's statements run as (``connect(user=…)``; the administrator by default)."""
        return self._executor.context.user

    @property
    def current_role(self) -> str:
        """The role whose privileges this Lake's statements are checked against (``USE ROLE``)."""
        return self._executor.context.role

    def __repr__(self) -> str:
        return f"Lake(warehouse={str(self.warehouse)!r})"
