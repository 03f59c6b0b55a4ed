"""Reaching Delta's Scala classes in the driver JVM through py4j.

Scala methods with default arguments take every argument from Java, and
``Option`` and ``Seq`` have to be built by hand; these helpers keep that in one place.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

JavaObject = Any
"""A py4j proxy of a JVM object."""


class Jvm:
    """The driver JVM of one SparkSession."""

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark
        self.jvm: Any = spark._jvm
        self.session: JavaObject = spark._jsparkSession

    def none(self) -> JavaObject:
        """Scala's ``None``."""
        return self.jvm.scala.Option.empty()

    def some(self, value: object) -> JavaObject:
        return self.jvm.scala.Option.apply(value)

    def seq(self, items: Iterable[JavaObject]) -> JavaObject:
        """A Scala ``Seq`` of JVM objects."""
        values = self.jvm.java.util.ArrayList()
        for item in items:
            values.add(item)
        return self.jvm.scala.jdk.javaapi.CollectionConverters.asScala(values).toList()

    def joined(self, strings: JavaObject, separator: str = "\n") -> str:
        """A JVM ``java.util.List`` of strings as one Python string, in a single call."""
        return str(self.jvm.java.lang.String.join(separator, strings))

    def delta_log(self, uri: str) -> JavaObject:
        """Delta's ``DeltaLog`` of the table at ``uri`` (cached by Delta per path)."""
        return self.jvm.org.apache.spark.sql.delta.DeltaLog.forTable(self.session, uri)

    def activate(self) -> None:
        """Make this session the JVM thread's active one, which Delta's own code uses (``SparkSession.active``).

        A frame Delta builds belongs to the active session; with several sessions
        in one JVM (``spark.newSession()``), it must be this Lake's.
        """
        self.jvm.org.apache.spark.sql.SparkSession.setActiveSession(self.session)

    def action(self, json_text: str) -> JavaObject:
        """A Delta action (add, metaData, ...) read from its JSON form by Delta itself."""
        return self.jvm.org.apache.spark.sql.delta.actions.Action.fromJson(json_text)

    def operations(self) -> JavaObject:
        return self.jvm.org.apache.spark.sql.delta.DeltaOperations
