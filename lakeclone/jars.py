"""Delta Lake's JVM jars: fetched once into a folder lakeclone owns, then handed to Spark as ``spark.jars``.

Spark's own ``spark.jars.packages`` resolves Maven coordinates through Ivy at
every session start, and goes to the network whenever its cache is partial.
lakeclone instead fetches ``io.delta:delta-spark_<spark>_2.13`` and its
dependencies once (``python -m lakeclone.jars``, which ``bin/setup`` runs),
drops the jars Spark already ships, and records the rest in a manifest. A
session start then reads only that folder. The same command then builds the
JVM class-data archive beside them (:mod:`lakeclone.jvm_archive`).

Object storage is asked for separately (``python -m lakeclone.jars --with s3``):
Hadoop's S3A connector and the parts of the AWS SDK it uses go into a folder
of their own, with lakeclone's one piece of JVM code, the log store that makes
Delta's commits on S3 safe for many drivers (built there from its source with
the JDK's ``javac``). Only a session on object storage loads them.

The folder is ``$LAKECLONE_JARS`` if set, else ``<sys.prefix>/share/lakeclone/jars``,
so each virtual environment has its own, matching its pyspark and delta-spark.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from lakeclone.errors import SetupError

JARS_ENV = "LAKECLONE_JARS"
MANIFEST = "manifest.txt"
SCALA = "2.13"
MAVEN_CENTRAL = "https://repo.maven.apache.org/maven2"

_VERSIONED_JAR = re.compile(r"^(?P<artifact>.+?)-(?P<version>\d[^-]*(?:-[^-]+)*)\.jar$")


@dataclass(frozen=True)
class DeltaArtifact:
    """The delta-spark artifact matching the installed pyspark and delta-spark packages."""

    spark_minor: str
    delta_version: str

    @property
    def coordinate(self) -> str:
        return f"io.delta:delta-spark_{self.spark_minor}_{SCALA}:{self.delta_version}"

    @property
    def coordinates(self) -> tuple[str, ...]:
        return (self.coordinate,)

    @property
    def exclusions(self) -> tuple[str, ...]:
        return ()

    @property
    def folder_name(self) -> str:
        return f"delta-spark_{self.spark_minor}_{SCALA}-{self.delta_version}"

    @property
    def fetch_command(self) -> str:
        return f"{Path(sys.executable).name} -m lakeclone.jars"


# The AWS SDK modules S3A uses, at the version tried with hadoop-aws 3.5.0; hadoop-aws's own
# dependency on the SDK's `bundle` (686 MB, every AWS service) is excluded in their favour.
AWS_SDK_VERSION = "2.35.4"
AWS_SDK_MODULES = ("s3", "s3-transfer-manager", "sts")
LOG_STORE_SOURCE = Path(__file__).with_name("jvm") / "io" / "lakeclone" / "delta" / "ConditionalCreateLogStore.java"
LOG_STORE_CLASS = "io.lakeclone.delta.ConditionalCreateLogStore"


@dataclass(frozen=True)
class ObjectStorageArtifact:
    """Hadoop's S3A connector (``hadoop-aws``, matching the Hadoop pyspark ships) and the AWS SDK modules it uses."""

    hadoop_version: str

    @property
    def coordinates(self) -> tuple[str, ...]:
        sdk = tuple(f"software.amazon.awssdk:{module}:{AWS_SDK_VERSION}" for module in AWS_SDK_MODULES)
        return (f"org.apache.hadoop:hadoop-aws:{self.hadoop_version}", *sdk)

    @property
    def exclusions(self) -> tuple[str, ...]:
        return ("software.amazon.awssdk:bundle",)

    @property
    def folder_name(self) -> str:
        return f"hadoop-aws-{self.hadoop_version}_awssdk-{AWS_SDK_VERSION}"

    @property
    def fetch_command(self) -> str:
        return f"{Path(sys.executable).name} -m lakeclone.jars --with s3"


Artifact = DeltaArtifact | ObjectStorageArtifact


def installed_artifact() -> DeltaArtifact:
    """The artifact for this environment's pyspark and delta-spark."""
    import pyspark

    try:
        delta_version = metadata.version("delta-spark")
    except metadata.PackageNotFoundError:
        raise SetupError("The Python package delta-spark is not installed; run bin/setup.") from None
    spark_minor = ".".join(pyspark.__version__.split(".")[:2])
    return DeltaArtifact(spark_minor, delta_version)


def log_store_jar() -> str:
    """The log store's jar's name, which carries its source's digest: a changed source is built again."""
    digest = hashlib.sha256(LOG_STORE_SOURCE.read_bytes()).hexdigest()[:12]
    return f"lakeclone-delta-logstore-{digest}.jar"


def object_storage_artifact() -> ObjectStorageArtifact:
    """hadoop-aws at the version of the Hadoop client pyspark ships."""
    import pyspark

    for jar in (Path(pyspark.__file__).parent / "jars").glob("hadoop-client-api-*.jar"):
        return ObjectStorageArtifact(jar.name.removeprefix("hadoop-client-api-").removesuffix(".jar"))
    raise SetupError("pyspark's Hadoop client (hadoop-client-api) is missing; reinstall pyspark with bin/setup.")


def cache_root() -> Path:
    configured = os.environ.get(JARS_ENV)
    return Path(configured) if configured else Path(sys.prefix) / "share" / "lakeclone" / "jars"


def jar_folder(artifact: Artifact | None = None) -> Path:
    return cache_root() / (artifact or installed_artifact()).folder_name


def delta_jars(artifact: DeltaArtifact | None = None) -> list[Path]:
    """The jars to hand Spark, or SetupError saying how to fetch them.

    Example:
        >>> ",".join(str(p) for p in delta_jars())  # doctest: +SKIP
        '/repo/.venv/share/lakeclone/jars/delta-spark_4.2_2.13-4.4.0/delta-spark_4.2_2.13-4.4.0.jar,...'
    """
    artifact = artifact or installed_artifact()
    return _fetched(artifact, f"Delta Lake's jars ({artifact.coordinate})")


def object_storage_jars(artifact: ObjectStorageArtifact | None = None) -> list[Path]:
    """The jars a session on object storage adds to Delta's (S3A, the AWS SDK, lakeclone's log store), or SetupError.

    Example:
        >>> [p.name for p in object_storage_jars()][:2]  # doctest: +SKIP
        ['analyticsaccelerator-s3-1.3.1.jar', 'annotations-2.35.4.jar']
    """
    artifact = artifact or object_storage_artifact()
    return _fetched(artifact, f"The jars for object storage ({artifact.coordinates[0]} and the AWS SDK's S3 client)")


def _fetched(artifact: Artifact, what: str) -> list[Path]:
    folder = jar_folder(artifact)
    manifest = folder / MANIFEST
    jars = [folder / line for line in _lines(manifest)] if manifest.exists() else []
    built = isinstance(artifact, DeltaArtifact) or folder / log_store_jar() in jars
    if not jars or not all(j.exists() for j in jars) or not built:
        raise SetupError(
            f"{what} are not in {folder}. Fetch them once, with network access, by running "
            f"`{artifact.fetch_command}` (bin/setup does this), or set LAKECLONE_JARS to a folder that holds them."
        )
    return jars


def _lines(path: Path) -> list[str]:
    return [line.strip() for line in path.read_text().splitlines() if line.strip()]


def fetch(artifact: Artifact | None = None, *, quiet: bool = False) -> Path:
    """Download the artifact and its dependencies unless already present; returns the folder.

    Uses Maven (``mvn``) when it is on the PATH, else Spark's own Ivy resolver
    once. Object storage's folder also gets lakeclone's log store, built there.
    """
    artifact = artifact or installed_artifact()
    target = jar_folder(artifact)
    with contextlib.suppress(SetupError):
        _fetched(artifact, "")
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="lakeclone-jars-", dir=target.parent) as scratch:
        downloaded = Path(scratch) / "all"
        if shutil.which("mvn"):
            _fetch_with_maven(artifact, Path(scratch), downloaded, quiet=quiet)
        else:
            _fetch_with_ivy(artifact, Path(scratch), downloaded)
        kept = Path(scratch) / "kept"
        kept.mkdir()
        names = []
        for jar in sorted(downloaded.glob("*.jar")):
            if jar.name not in _spark_duplicates(downloaded):
                shutil.copy2(jar, kept / jar.name)
                names.append(jar.name)
        if isinstance(artifact, ObjectStorageArtifact):
            _build_log_store(kept, Path(scratch) / "classes")
            names.append(log_store_jar())
        (kept / MANIFEST).write_text("\n".join(names) + "\n")
        shutil.rmtree(target, ignore_errors=True)
        os.replace(kept, target)
    _fetched(artifact, "")
    return target


def _build_log_store(jars: Path, classes: Path) -> None:
    """Compile lakeclone's log store (:data:`LOG_STORE_SOURCE`) against Hadoop's, S3A's and Delta's jars into ``jars``."""
    import pyspark

    # The javac of the Java Spark runs on, else the one on the PATH.
    home = os.environ.get("JAVA_HOME")
    javac = (home and shutil.which("javac", path=os.path.join(home, "bin"))) or shutil.which("javac")
    if not javac:
        raise SetupError(
            "Object storage needs a JDK's javac to build lakeclone's log store, and none was found: install a "
            "JDK 17+ (Debian/Ubuntu: `apt-get install openjdk-17-jdk-headless`) or point JAVA_HOME at one."
        )
    class_path = [
        *(Path(pyspark.__file__).parent / "jars").glob("hadoop-client-api-*.jar"),
        *jars.glob("hadoop-aws-*.jar"),
        *delta_jars(),
    ]
    compiled = subprocess.run(
        [javac, "--release", "17", "-d", str(classes), "-cp", os.pathsep.join(map(str, class_path)), str(LOG_STORE_SOURCE)],
        capture_output=True,
        text=True,
        check=False,
    )
    if compiled.returncode != 0:
        raise SetupError(f"javac could not build lakeclone's log store:\n{compiled.stderr.strip()}")
    with zipfile.ZipFile(jars / log_store_jar(), "w") as jar:
        for path in sorted(classes.rglob("*.class")):
            jar.write(path, path.relative_to(classes).as_posix())


def _spark_duplicates(folder: Path) -> set[str]:
    """Jars in ``folder`` that Spark already ships: the same artifact in any version, or any class it has.

    Two copies of a class on one class path make which one loads an accident,
    so a jar that overlaps Spark's (commons-logging and Spark's jcl-over-slf4j) goes.
    """
    import pyspark

    spark_jars = list((Path(pyspark.__file__).parent / "jars").glob("*.jar"))
    shipped = {_artifact_of(j.name) for j in spark_jars}
    spark_classes = set().union(*(_classes(j) for j in spark_jars))
    duplicates = set()
    for jar in folder.glob("*.jar"):
        classes = _classes(jar)
        if _artifact_of(jar.name) in shipped or classes & spark_classes:
            duplicates.add(jar.name)
    return duplicates


def _classes(jar: Path) -> set[str]:
    with zipfile.ZipFile(jar) as archive:
        return {n for n in archive.namelist() if n.endswith(".class") and not n.startswith("META-INF/")}


def _artifact_of(file_name: str) -> str:
    match = _VERSIONED_JAR.match(file_name)
    name = match.group("artifact") if match else file_name.removesuffix(".jar")
    # Ivy names its jars group_artifact-version.jar.
    return name.split("_", 1)[1] if name.startswith(("io.", "org.", "com.", "net.")) and "_" in name else name


POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>lakeclone</groupId>
  <artifactId>jars</artifactId>
  <version>0</version>
  <dependencies>
{dependencies}
  </dependencies>
</project>
"""
DEPENDENCY = """    <dependency>
      <groupId>{group}</groupId>
      <artifactId>{artifact}</artifactId>
      <version>{version}</version>
      <exclusions>{exclusions}</exclusions>
    </dependency>"""
EXCLUSION = "<exclusion><groupId>{group}</groupId><artifactId>{artifact}</artifactId></exclusion>"


def _pom(artifact: Artifact) -> str:
    exclusions = "".join(
        EXCLUSION.format(group=group, artifact=name) for group, name in (e.split(":") for e in artifact.exclusions)
    )
    dependencies = [
        DEPENDENCY.format(group=group, artifact=name, version=version, exclusions=exclusions)
        for group, name, version in (c.split(":") for c in artifact.coordinates)
    ]
    return POM.format(dependencies="\n".join(dependencies))


def _fetch_with_maven(artifact: Artifact, scratch: Path, out: Path, *, quiet: bool) -> None:
    (scratch / "pom.xml").write_text(_pom(artifact))
    command = [
        "mvn",
        "-B",
        "-q",
        "-f",
        str(scratch / "pom.xml"),
        "dependency:copy-dependencies",
        f"-DoutputDirectory={out}",
        "-DincludeScope=runtime",
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        detail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-5:])
        raise SetupError(f"Maven could not fetch {', '.join(artifact.coordinates)}:\n{detail}")
    if not quiet:
        print(f"lakeclone: fetched {', '.join(artifact.coordinates)} and their dependencies with Maven", file=sys.stderr)


def _fetch_with_ivy(artifact: Artifact, scratch: Path, out: Path) -> None:
    """Let Spark's Ivy resolve the artifact once, in a throwaway JVM."""
    script = (
        "import sys\n"
        "from pyspark.sql import SparkSession\n"
        "spark = (SparkSession.builder.master('local[1]')"
        ".config('spark.jars.packages', sys.argv[1]).config('spark.jars.ivy', sys.argv[2])"
        ".config('spark.jars.excludes', sys.argv[3])"
        ".config('spark.ui.enabled', 'false').getOrCreate())\n"
        "spark.stop()\n"
    )
    ivy = scratch / "ivy"
    coordinates, exclusions = ",".join(artifact.coordinates), ",".join(artifact.exclusions)
    done = subprocess.run(
        [sys.executable, "-c", script, coordinates, str(ivy), exclusions], capture_output=True, text=True, check=False
    )
    jars = ivy / "jars"
    if done.returncode != 0 or not jars.exists():
        detail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-5:])
        raise SetupError(f"Could not fetch {coordinates} (no `mvn` on the PATH, and Spark's Ivy failed):\n{detail}")
    out.mkdir(parents=True)
    for jar in jars.glob("*.jar"):
        shutil.copy2(jar, out / jar.name)


def main(argv: list[str] | None = None) -> int:
    """``python -m lakeclone.jars [--with s3]``: fetch the jars and build the JVM class-data archive (if needed).

    Prints the folder (and object storage's, when asked for). The archive only
    saves start-up time, so failing to build it is a warning, not a failed setup.
    """
    import argparse

    from lakeclone import jvm_archive

    parser = argparse.ArgumentParser(prog="python -m lakeclone.jars", description=main.__doc__)
    parser.add_argument(
        "--with", dest="extras", action="append", choices=["s3"], default=[], help="also fetch S3A for object storage"
    )
    extras = parser.parse_args(argv).extras
    try:
        folders = [fetch()]
        if "s3" in extras:
            folders.append(fetch(object_storage_artifact()))
    except SetupError as error:
        print(f"lakeclone.jars: {error}", file=sys.stderr)
        return 1
    try:
        jvm_archive.build()
    except SetupError as error:
        print(f"lakeclone.jars: sessions will start without a class-data archive: {error}", file=sys.stderr)
    print("\n".join(map(str, folders)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
