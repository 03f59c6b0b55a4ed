"""Delta Lake's JVM jars: fetched once into a folder lakeclone owns, then handed to Spark as ``spark.jars``.

Spark's own ``spark.jars.packages`` resolves Maven coordinates through Ivy at
every session start, and goes to the network whenever its cache is partial.
lakeclone instead fetches ``io.delta:delta-spark_<spark>_2.13`` and its
dependencies once (``python -m lakeclone.jars``, which ``bin/setup`` runs),
drops the jars Spark already ships, and records the rest in a manifest. A
session start then reads only that folder. The same command then builds the
JVM class-data archive beside them (:mod:`lakeclone.jvm_archive`).

The folder is ``$LAKECLONE_JARS`` if set, else ``<sys.prefix>/share/lakeclone/jars``,
so each virtual environment has its own, matching its pyspark and delta-spark.
"""

from __future__ import annotations

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
    def folder_name(self) -> str:
        return f"delta-spark_{self.spark_minor}_{SCALA}-{self.delta_version}"


def installed_artifact() -> DeltaArtifact:
    """The artifact for this environment's pyspark and delta-spark."""
    import pyspark

    try:
        delta_version = metadata.version("delta-spark")
    except metadata.PackageNotFoundError:
        raise SetupError("The Python package delta-spark is not installed; run bin/setup.") from None
    spark_minor = ".".join(pyspark.__version__.split(".")[:2])
    return DeltaArtifact(spark_minor, delta_version)


def cache_root() -> Path:
    configured = os.environ.get(JARS_ENV)
    return Path(configured) if configured else Path(sys.prefix) / "share" / "lakeclone" / "jars"


def jar_folder(artifact: DeltaArtifact | None = None) -> Path:
    return cache_root() / (artifact or installed_artifact()).folder_name


def delta_jars(artifact: DeltaArtifact | None = None) -> list[Path]:
    """The jars to hand Spark, or SetupError saying how to fetch them.

    Example:
        >>> ",".join(str(p) for p in delta_jars())  # doctest: +SKIP
        '/repo/.venv/share/lakeclone/jars/delta-spark_4.2_2.13-4.4.0/delta-spark_4.2_2.13-4.4.0.jar,...'
    """
    artifact = artifact or installed_artifact()
    folder = jar_folder(artifact)
    manifest = folder / MANIFEST
    jars = [folder / line for line in _lines(manifest)] if manifest.exists() else []
    if not jars or not all(j.exists() for j in jars):
        raise SetupError(
            f"Delta Lake's jars ({artifact.coordinate}) are not in {folder}. Fetch them once, with "
            f"network access, by running `{Path(sys.executable).name} -m lakeclone.jars` "
            "(bin/setup does this), or set LAKECLONE_JARS to a folder that holds them."
        )
    return jars


def _lines(path: Path) -> list[str]:
    return [line.strip() for line in path.read_text().splitlines() if line.strip()]


def fetch(artifact: DeltaArtifact | None = None, *, quiet: bool = False) -> Path:
    """Download the artifact and its dependencies unless already present; returns the folder.

    Uses Maven (``mvn``) when it is on the PATH, else Spark's own Ivy resolver once.
    """
    artifact = artifact or installed_artifact()
    target = jar_folder(artifact)
    try:
        delta_jars(artifact)
        return target
    except SetupError:
        pass
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
        (kept / MANIFEST).write_text("\n".join(names) + "\n")
        shutil.rmtree(target, ignore_errors=True)
        os.replace(kept, target)
    delta_jars(artifact)
    return target


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
  <artifactId>delta-jars</artifactId>
  <version>0</version>
  <dependencies>
    <dependency>
      <groupId>{group}</groupId>
      <artifactId>{artifact}</artifactId>
      <version>{version}</version>
    </dependency>
  </dependencies>
</project>
"""


def _fetch_with_maven(artifact: DeltaArtifact, scratch: Path, out: Path, *, quiet: bool) -> None:
    group, name, version = artifact.coordinate.split(":")
    (scratch / "pom.xml").write_text(POM.format(group=group, artifact=name, version=version))
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
        raise SetupError(f"Maven could not fetch {artifact.coordinate}:\n{detail}")
    if not quiet:
        print(f"lakeclone: fetched {artifact.coordinate} and its dependencies with Maven", file=sys.stderr)


def _fetch_with_ivy(artifact: DeltaArtifact, scratch: Path, out: Path) -> None:
    """Let Spark's Ivy resolve the artifact once, in a throwaway JVM."""
    script = (
        "import sys\n"
        "from pyspark.sql import SparkSession\n"
        "spark = (SparkSession.builder.master('local[1]')"
        ".config('spark.jars.packages', sys.argv[1]).config('spark.jars.ivy', sys.argv[2])"
        ".config('spark.ui.enabled', 'false').getOrCreate())\n"
        "spark.stop()\n"
    )
    ivy = scratch / "ivy"
    done = subprocess.run(
        [sys.executable, "-c", script, artifact.coordinate, str(ivy)], capture_output=True, text=True, check=False
    )
    jars = ivy / "jars"
    if done.returncode != 0 or not jars.exists():
        detail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-5:])
        raise SetupError(f"Could not fetch {artifact.coordinate} (no `mvn` on the PATH, and Spark's Ivy failed):\n{detail}")
    out.mkdir(parents=True)
    for jar in jars.glob("*.jar"):
        shutil.copy2(jar, out / jar.name)


def main() -> int:
    """``python -m lakeclone.jars``: fetch the jars and build the JVM class-data archive (if needed); print the folder.

    The archive only saves start-up time, so failing to build it is a warning,
    not a failed setup.
    """
    from lakeclone import jvm_archive

    try:
        folder = fetch()
    except SetupError as error:
        print(f"lakeclone.jars: {error}", file=sys.stderr)
        return 1
    try:
        jvm_archive.build()
    except SetupError as error:
        print(f"lakeclone.jars: sessions will start without a class-data archive: {error}", file=sys.stderr)
    print(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
