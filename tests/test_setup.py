"""Getting started: Delta's jars, a user's own SparkSession, and catalogs written by older lakeclones."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest
from jvm_settings import worker_env

import lakeclone
from lakeclone import jars, jvm_archive, session
from lakeclone.catalog.entries import ColumnDefault, Identity, TableKind
from lakeclone.catalog.migrations import INITIAL, MIGRATIONS
from lakeclone.catalog.store import Catalog
from lakeclone.errors import CatalogVersionError, SetupError


def test_missing_jars_say_how_to_fetch_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(jars.JARS_ENV, str(tmp_path / "no-jars-here"))

    with pytest.raises(SetupError) as raised:
        jars.delta_jars()

    message = str(raised.value)
    assert "io.delta:delta-spark_" in message and str(tmp_path / "no-jars-here") in message
    assert "-m lakeclone.jars" in message and "LAKECLONE_JARS" in message


def artifact(jar_name: str) -> str:
    """A jar's artifact without its version: jackson-core-2.18.2.jar -> jackson-core."""
    return re.sub(r"-\d[\w.-]*\.jar$", "", jar_name)


def test_the_fetched_jars_are_complete_and_hold_no_second_copy_of_sparks_own() -> None:
    import pyspark

    names = [jar.name for jar in jars.delta_jars()]
    assert any(name.startswith("delta-spark_") for name in names)
    assert any(name.startswith("delta-storage-") for name in names)
    # Two versions of one library on Spark's classpath break it: Spark's own copy wins.
    sparks = {artifact(jar.name) for jar in (Path(pyspark.__file__).parent / "jars").glob("*.jar")}
    assert sparks and not {artifact(name) for name in names} & sparks


def test_missing_object_storage_jars_say_how_to_fetch_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(jars.JARS_ENV, str(tmp_path / "no-jars-here"))

    with pytest.raises(SetupError, match=r"org\.apache\.hadoop:hadoop-aws:.*-m lakeclone\.jars --with s3"):
        jars.object_storage_jars()


def test_the_object_storage_jars_are_s3a_the_sdks_s3_client_and_the_log_store_built_from_its_source() -> None:
    import pyspark

    fetched = jars.object_storage_jars()
    names = {artifact(jar.name) for jar in fetched}
    assert {"hadoop-aws", "s3", "s3-transfer-manager", "sts"} <= names
    assert "bundle" not in names  # the SDK's 686 MB of every AWS service
    sparks = {artifact(jar.name) for jar in (Path(pyspark.__file__).parent / "jars").glob("*.jar")}
    assert not names & sparks
    assert sum(jar.stat().st_size for jar in fetched) < 20_000_000
    # The log store's jar is named for its source's digest, and holds the class compiled from it.
    (log_store,) = [jar for jar in fetched if jar.name == jars.log_store_jar()]
    with zipfile.ZipFile(log_store) as archive:
        assert archive.namelist() == [jars.LOG_STORE_CLASS.replace(".", "/") + ".class"]


def test_only_a_session_on_object_storage_loads_its_jars_and_log_store() -> None:
    embedded = session.embedded_builder()._options
    assert "hadoop-aws" not in embedded["spark.jars"] and session.LOG_STORE_KEY not in embedded
    on_s3 = session.embedded_builder(object_storage=True)._options
    assert "hadoop-aws" in on_s3["spark.jars"] and jars.log_store_jar() in on_s3["spark.jars"]
    assert on_s3[session.LOG_STORE_KEY] == jars.LOG_STORE_CLASS
    assert on_s3["spark.sql.sources.parallelPartitionDiscovery.parallelism"] == "8"


def test_object_storage_settings_come_from_the_aws_environment_and_never_carry_keys() -> None:
    server = {"AWS_ENDPOINT_URL": "http://127.0.0.1:9000", "AWS_ACCESS_KEY_ID": "key", "AWS_SECRET_ACCESS_KEY": "secret"}
    assert session.object_storage_settings(server) == {
        "spark.hadoop.fs.s3a.endpoint": "http://127.0.0.1:9000",
        "spark.hadoop.fs.s3a.path.style.access": "true",
        "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
        "spark.hadoop.fs.s3a.endpoint.region": "us-east-1",
    }
    aws = {
        "AWS_REGION": "eu-west-1",
        "AWS_PROFILE": "analytics",
        "AWS_ENDPOINT_URL": "https://x",
        "AWS_ENDPOINT_URL_S3": "https://s3.x",
    }
    assert session.object_storage_settings(aws) == {
        "spark.hadoop.fs.s3a.endpoint": "https://s3.x",
        "spark.hadoop.fs.s3a.path.style.access": "true",
        "spark.hadoop.fs.s3a.connection.ssl.enabled": "true",
        "spark.hadoop.fs.s3a.endpoint.region": "eu-west-1",
        "spark.hadoop.fs.s3a.aws.credentials.provider": "software.amazon.awssdk.auth.credentials.ProfileCredentialsProvider",
    }
    assert session.object_storage_settings({}) == {}


def test_configure_spark_keeps_a_users_own_s3a_settings() -> None:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.config("spark.hadoop.fs.s3a.attempts.maximum", "10")
    options = lakeclone.configure_spark(builder, object_storage=True)._options
    assert options["spark.hadoop.fs.s3a.attempts.maximum"] == "10"
    assert options["spark.hadoop.fs.s3a.retry.limit"] == "3"


USER_SESSION = textwrap.dedent(
    """
    import sys
    from pyspark.sql import SparkSession
    import lakeclone

    warehouse, mode = sys.argv[1], sys.argv[2]
    builder = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
    if mode == "plain":
        try:
            lakeclone.connect(warehouse, spark=builder.getOrCreate())
        except lakeclone.LakecloneError as error:
            print("refused:", error)
        sys.exit(0)
    assert lakeclone.configure_spark(builder) is builder
    spark = builder.getOrCreate()
    try:
        lakeclone.connect("s3a://lake-warehouse/wh", spark=spark, catalog=warehouse + "-s3-catalog")
    except lakeclone.LakecloneError as error:
        print("refused s3:", error)
    lake = lakeclone.connect(warehouse, spark=spark)
    lake.sql("CREATE TABLE t (id INT); INSERT INTO t VALUES (1), (2)")
    print("rows:", sorted(r.ID for r in lake.sql("SELECT * FROM t").collect()))
    print("delta reads:", spark.read.format("delta").load(lake.sql("DESCRIBE DETAIL t").first().location).count())
    """
)


@pytest.mark.spark
def test_a_session_without_delta_is_refused_and_configure_spark_fixes_it(tmp_path: Path) -> None:
    """And one without object storage is refused a warehouse on S3, with nothing created."""
    script = tmp_path / "user_session.py"
    script.write_text(USER_SESSION)
    # Side by side: each is a JVM of its own, since Spark adds jars only at its first start.
    runs = {
        mode: subprocess.Popen(
            [sys.executable, str(script), str(tmp_path / f"warehouse_{mode}"), mode],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
            env=worker_env(),
        )
        for mode in ("plain", "configured")
    }
    out = {}
    for mode, run in runs.items():
        stdout, stderr = run.communicate(timeout=300)
        assert run.returncode == 0, stderr[-3000:]
        out[mode] = stdout.splitlines()
    (refused,) = out["plain"]
    assert refused.startswith("refused:")
    assert "lacks Delta Lake's SQL extension" in refused and "lakeclone.configure_spark" in refused
    refused_s3, *configured = out["configured"]
    assert refused_s3.startswith("refused s3: The warehouse s3a://lake-warehouse/wh is on object storage")
    assert "configure_spark(builder, object_storage=True)" in refused_s3
    assert not (tmp_path / "warehouse_configured-s3-catalog").exists()
    assert configured == ["rows: [1, 2]", "delta reads: 2"]


EMBEDDED_SESSION = textwrap.dedent(
    """
    from lakeclone.session import embedded_spark

    print(embedded_spark().sql("SELECT 1").first()[0])
    """
)


QUIET_START = textwrap.dedent(
    """
    import sys, tempfile
    import lakeclone

    lake = lakeclone.connect(tempfile.mkdtemp() + "/wh")
    lake.sql("CREATE TABLE t (id INT); INSERT INTO t VALUES (1)")
    lake.sql("ALTER TABLE t SET CHANGE_TRACKING = TRUE")  # Delta upgrades the table's protocol
    lake.spark.sparkContext._jvm.System.err.println("from the JVM")
    lake.spark.sparkContext._jvm.System.out.println("out of the JVM")
    lake.spark.stop()
    print("done", flush=True)
    """
)


@pytest.mark.spark
def test_a_new_session_says_nothing_but_what_the_jvm_is_asked_to(tmp_path: Path) -> None:
    # Spark's log-level lines, the JVM's incubator-module warning and Delta's protocol-upgrade line would show
    # in red in a notebook's first cells; what else the JVM writes still reaches this process's stdout and stderr.
    script = tmp_path / "quiet.py"
    script.write_text(QUIET_START)

    run = subprocess.run(
        [sys.executable, str(script)], check=False, capture_output=True, text=True, cwd=tmp_path, env=worker_env(), timeout=300
    )

    assert run.returncode == 0, run.stderr[-3000:]
    assert sorted(run.stdout.splitlines()) == ["done", "out of the JVM"]
    # JAVA_TOOL_OPTIONS, which the tests set, makes the JVMs say they picked it up.
    assert [line for line in run.stderr.splitlines() if not line.startswith("Picked up JAVA_TOOL_OPTIONS")] == ["from the JVM"]


@pytest.mark.spark
def test_the_embedded_session_maps_the_class_archive_setup_built(tmp_path: Path) -> None:
    # bin/setup's `python -m lakeclone.jars` built it; a stamp names the Java it is for.
    assert jvm_archive.archive_path().exists()
    assert jvm_archive.archive_path().with_name(jvm_archive.STAMP).read_text() == jvm_archive.java_identity()
    script, log = tmp_path / "embedded.py", tmp_path / "classes.log"
    script.write_text(EMBEDDED_SESSION)
    env = worker_env()
    # Spark's launcher JVM writes this log first; the session's JVM, started after it exits, writes it anew.
    env["JAVA_TOOL_OPTIONS"] += f" -Xlog:class+load=info:file={log}"

    run = subprocess.run(
        [sys.executable, str(script)], check=False, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300
    )

    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip() == "1"
    loaded = re.findall(r"\] (\S+) source: (.*)$", log.read_text(), re.M)
    # Lambdas' classes are made as the JVM runs; every other class can come from the archive.
    named = dict((name, source) for name, source in loaded if "$$Lambda" not in name)
    archived = [name for name, source in named.items() if source == "shared objects file (top)"]
    assert (
        named["org.apache.spark.sql.SparkSession"]
        == named["io.delta.sql.DeltaSparkSessionExtension"]
        == "shared objects file (top)"
    )
    assert len(named) > 5000 and len(archived) > 0.8 * len(named), (len(archived), len(named))


def test_setup_refuses_an_archive_a_jvm_cannot_map(tmp_path: Path) -> None:
    archive = tmp_path / "classes.jsa"
    archive.write_bytes(b"not an archive")

    check = subprocess.run(
        [sys.executable, "-m", "lakeclone.jvm_archive", "--check", str(archive)],
        check=False, capture_output=True, text=True, cwd=tmp_path, env=worker_env(), timeout=300,
    )  # fmt: skip

    assert check.returncode != 0
    assert "An error has occurred while processing the shared archive file" in check.stdout + check.stderr


def test_a_catalog_from_before_delta_spark_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "catalog.sqlite"
    old = sqlite3.connect(path)
    old.executescript(INITIAL)
    old.executescript(
        """
        INSERT INTO databases VALUES ('d', 'LAKE', '2024-01-01T00:00:00.000000Z', NULL);
        INSERT INTO schemas VALUES ('s', 'd', 'PUBLIC', '2024-01-01T00:00:00.000000Z', NULL);
        INSERT INTO tables (id, schema_id, name, kind, location, created_at)
            VALUES ('m', 's', 'M', 'MANAGED', '/old/warehouse/tables/m', '2024-01-01T00:00:00.000000Z'),
                   ('e', 's', 'E', 'EXTERNAL', '/data/e', '2024-01-01T00:00:00.000000Z');
        """
    )
    old.execute("PRAGMA user_version = 0")  # written before migrations were numbered
    old.commit()
    old.close()

    catalog = Catalog(path)
    try:
        managed, external = catalog.objects.table("LAKE", "PUBLIC", "M"), catalog.objects.table("LAKE", "PUBLIC", "E")
        assert managed is not None and external is not None
        assert (managed.kind, managed.location, managed.owns_folder) == (
            TableKind.MANAGED,
            "file:/old/warehouse/tables/m",
            True,
        )
        assert (external.kind, external.location, external.owns_folder) == (TableKind.EXTERNAL, "file:/data/e", False)
    finally:
        catalog.close()
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    check.close()
    Catalog(path).close()  # opening a migrated catalog again changes nothing


def test_column_defaults_keep_their_order_and_kinds_when_identity_columns_arrive(tmp_path: Path) -> None:
    """The migration that lets a default be a column's own numbering makes the table again: nothing of it is lost."""
    path = tmp_path / "catalog.sqlite"
    old = sqlite3.connect(path)
    before_identity = 14  # IDENTITY_COLUMNS is migration 15
    for migration in MIGRATIONS[:before_identity]:
        migration(old)
    old.executescript(
        """
        INSERT INTO databases VALUES ('d', 'LAKE', '2024-01-01T00:00:00.000000Z', NULL);
        INSERT INTO schemas VALUES ('s', 'd', 'PUBLIC', '2024-01-01T00:00:00.000000Z', NULL);
        INSERT INTO tables (id, schema_id, name, kind, location, created_at)
            VALUES ('t', 's', 'T', 'MANAGED', 'file:/w/tables/t', '2024-01-01T00:00:00.000000Z');
        INSERT INTO sequences (id, schema_id, name, next_value, increment, created_at)
            VALUES ('q', 's', 'SEQ', 1, 1, '2024-01-01T00:00:00.000000Z');
        INSERT INTO column_defaults VALUES ('t', 'B', NULL, '7'), ('t', 'A', 'q', NULL);
        """
    )
    old.execute(f"PRAGMA user_version = {before_identity}")
    old.commit()
    old.close()
    catalog = Catalog(path)
    try:
        assert catalog.definitions.column_defaults("t") == [
            ColumnDefault("B", expression="7"),
            ColumnDefault("A", sequence_id="q"),
        ]
        catalog.definitions.set_column_default("t", ColumnDefault("C", identity=Identity(5, 2)))
        assert catalog.definitions.reserve_identity_values("t", "C", 3) == (5, 2)
        assert catalog.definitions.identity_next("t", "C") == 11
        assert catalog.definitions.column_defaults("t")[-1] == ColumnDefault("C", identity=Identity(5, 2))
    finally:
        catalog.close()


def test_a_catalog_from_a_newer_lakeclone_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "catalog.sqlite"
    Catalog(path).close()
    newer = sqlite3.connect(path)
    newer.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    newer.commit()
    newer.close()

    with pytest.raises(CatalogVersionError, match="upgrade lakeclone"):
        Catalog(path)
