"""COPY INTO from a stage against Spark's own CSV read and Delta write of the same files.

    .venv/bin/python bench/bench_copy.py [--rows 1000000] [--files 4] [--repeat 3] [--warmup 1]

Both sides read the same CSV files (a header line each) with the table's
schema and append them to a new Delta table. lakeclone's side is the whole
statement: listing, checksums and load history, every value checked against
its column, the per-file counts, the commit. Target: ratio of medians ≤ 1.2.

A second pair loads the files through a transformation (casts and a function
of the fields: ``COPY INTO t FROM (SELECT $1::BIGINT, UPPER($2), … FROM @s)``)
against Spark's read of the text with the same expressions; lakeclone's side
also checks each cast, so that a failed one follows ON_ERROR (INFO, no target).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import tempfile
from typing import TYPE_CHECKING, Any

from _timing import environment, format_table, interleave, ratio, seconds, write_json

import lakeclone

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SCHEMA = "id BIGINT, customer STRING, amount DECIMAL(10, 2), ordered DATE"
TARGET = 1.2
TRANSFORMATION = "SELECT $1::BIGINT, UPPER($2), $3::DECIMAL(10, 2), $4::DATE FROM @landing"
SPARK_TRANSFORMATION = (
    "CAST(id AS BIGINT) AS id",
    "upper(customer) AS customer",
    "CAST(amount AS DECIMAL(10, 2)) AS amount",
    "CAST(ordered AS DATE) AS ordered",
)


def make_files(spark: SparkSession, folder: str, rows: int, files: int) -> None:
    """``files`` CSV files of ``rows`` rows in all, each with a header line."""
    (
        spark.range(rows, numPartitions=files)
        .selectExpr(
            "id",
            "concat('customer_', id % 1000) AS customer",
            "CAST((id % 10000) / 100 AS DECIMAL(10, 2)) AS amount",
            "date_add(DATE'2024-01-01', CAST(id % 365 AS INT)) AS ordered",
        )
        .write.option("header", "true")
        .csv(folder)
    )


def run(spark: SparkSession, root: str, *, rows: int, files: int, repeat: int, warmup: int) -> dict[str, Any]:
    staged = os.path.join(root, "staged")
    make_files(spark, staged, rows, files)
    lake = lakeclone.connect(os.path.join(root, "warehouse"), spark=spark)
    lake.sql(f"CREATE STAGE landing URL = 'file:{staged}' FILE_FORMAT = (TYPE = CSV SKIP_HEADER = 1)")
    spark_tables = os.path.join(root, "spark_tables")

    def new_table(round_: int) -> str:
        name = f"orders_{round_}"
        lake.sql(f"CREATE TABLE {name} ({SCHEMA})")
        return name

    def new_transformed_table(round_: int) -> str:
        name = f"transformed_{round_}"
        lake.sql(f"CREATE TABLE {name} ({SCHEMA})")
        return name

    def copy(name: str) -> None:
        statuses = {row.status for row in lake.sql(f"COPY INTO {name} FROM @landing").collect()}
        assert statuses == {"LOADED"}, statuses

    def copy_transformed(name: str) -> None:
        statuses = {row.status for row in lake.sql(f"COPY INTO {name} FROM ({TRANSFORMATION})").collect()}
        assert statuses == {"LOADED"}, statuses

    def spark_load(round_: int) -> None:
        frame = spark.read.schema(SCHEMA).option("header", "true").csv(staged)
        frame.write.format("delta").mode("append").save(os.path.join(spark_tables, str(round_)))

    def spark_transformed(round_: int) -> None:
        frame = spark.read.option("header", "true").csv(staged).selectExpr(*SPARK_TRANSFORMATION)
        frame.write.format("delta").mode("append").save(os.path.join(spark_tables, f"transformed_{round_}"))

    def spark_round(round_: int) -> int:
        return round_

    timings = interleave(
        {
            "lakeclone": (copy, new_table, None),
            "spark": (spark_load, spark_round, None),
            "lakeclone_transformed": (copy_transformed, new_transformed_table, None),
            "spark_transformed": (spark_transformed, spark_round, None),
        },
        repeat=repeat,
        warmup=warmup,
    )
    last = warmup + repeat - 1
    for table in (f"orders_{last}", f"transformed_{last}"):
        loaded = lake.sql(f"SELECT COUNT(*) FROM {table}").collect()[0][0]
        assert loaded == rows, (table, loaded, rows)
    return {
        "rows": rows,
        "files": files,
        **{name: timing.to_dict() for name, timing in timings.items()},
        "ratio_median": round(ratio(timings["lakeclone"], timings["spark"]), 3),
        "ratio_best": round(ratio(timings["lakeclone"], timings["spark"], "best"), 3),
        "transformed_ratio_median": round(ratio(timings["lakeclone_transformed"], timings["spark_transformed"]), 3),
        "target": TARGET,
        "environment": environment(spark),
    }


def main(argv: list[str] | None = None, *, spark: SparkSession | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--output", default="bench/results/copy.json")
    options = parser.parse_args(argv)
    if spark is None:
        from lakeclone.session import embedded_spark

        spark = embedded_spark()
    with contextlib.ExitStack() as stack:
        root = tempfile.mkdtemp(prefix="lakeclone-bench-copy-")
        stack.callback(shutil.rmtree, root, ignore_errors=True)
        report = run(spark, root, rows=options.rows, files=options.files, repeat=options.repeat, warmup=options.warmup)
    print(
        format_table(
            ["workload", "median", "best"],
            [
                [
                    f"COPY INTO, {options.rows:,} rows in {options.files} files",
                    seconds(report["lakeclone"]["median_s"]),
                    seconds(report["lakeclone"]["best_s"]),
                ],
                [
                    "spark.read.csv(...).write.format('delta')",
                    seconds(report["spark"]["median_s"]),
                    seconds(report["spark"]["best_s"]),
                ],
                [
                    "COPY INTO … FROM (SELECT $1::BIGINT, UPPER($2), …)",
                    seconds(report["lakeclone_transformed"]["median_s"]),
                    seconds(report["lakeclone_transformed"]["best_s"]),
                ],
                [
                    "spark.read.csv(...).selectExpr(the same).write",
                    seconds(report["spark_transformed"]["median_s"]),
                    seconds(report["spark_transformed"]["best_s"]),
                ],
            ],
        )
    )
    verdict = "PASS" if report["ratio_median"] <= TARGET else "FAIL"
    print(f"ratio of medians {report['ratio_median']:.2f} (best {report['ratio_best']:.2f}), target ≤ {TARGET}: {verdict}")
    print(f"transformed: ratio of medians {report['transformed_ratio_median']:.2f} (INFO)")
    if options.output:
        write_json(options.output, report)
    return report


if __name__ == "__main__":
    main()
