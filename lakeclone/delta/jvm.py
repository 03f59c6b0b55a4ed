"""Reaching Delta's Scala classes in the driver JVM through py4j.

Scala methods with default arguments take every argument from Java, and
``Option`` and ``Seq`` have to be built by hand; these helpers keep that in one place.
"""

from __future__ import annotations

import contextlib
import functools
import weakref
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

JavaObject = Any
"""A py4j proxy of a JVM object."""

_CLASSES: weakref.WeakKeyDictionary[Any, dict[str, JavaObject]] = weakref.WeakKeyDictionary()
"""The classes :meth:`Jvm.cls` has looked up, by the py4j view of the JVM they belong to."""


class Jvm:
    """The driver JVM of one SparkSession."""

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark
        self.jvm: Any = spark._jvm
        self.session: JavaObject = spark._jsparkSession
        self._classes = _CLASSES.setdefault(self.jvm, {})
        self._none: JavaObject = None

    def cls(self, name: str) -> JavaObject:
        """The JVM class (or Scala object) of a full name, looked up once per JVM.

        py4j resolves ``jvm.org.apache.….C`` one dotted step at a time, each a
        round trip in which the JVM searches every jar for a class of that
        name: ~5 ms for a name, paid by every statement that spelled it out.
        """
        found = self._classes.get(name)
        if found is None:
            found = self._classes[name] = functools.reduce(getattr, name.split("."), self.jvm)
        return found

    def none(self) -> JavaObject:
        """Scala's ``None`` (one object, so fetched once)."""
        if self._none is None:
            self._none = self.cls("scala.Option").empty()
        return self._none

    def some(self, value: object) -> JavaObject:
        return self.cls("scala.Option").apply(value)

    def seq(self, items: Iterable[JavaObject]) -> JavaObject:
        """A Scala ``Seq`` of JVM objects."""
        values = self.cls("java.util.ArrayList")()
        for item in items:
            values.add(item)
        return self.cls("scala.jdk.javaapi.CollectionConverters").asScala(values).toList()

    def joined(self, strings: JavaObject, separator: str = "\n") -> str:
        """A JVM ``java.util.List`` of strings as one Python string, in a single call."""
        return str(self.cls("java.lang.String").join(separator, strings))

    def delta_log(self, uri: str) -> JavaObject:
        """Delta's ``DeltaLog`` of the table at ``uri`` (cached by Delta per path)."""
        return self.cls("org.apache.spark.sql.delta.DeltaLog").forTable(self.session, uri)

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        """This session as the JVM thread's active one for the block (``SparkSession.active``), and the one before it after.

        Delta's own code uses the active session: a frame it builds belongs to
        it, and a transaction takes its commit metadata (``commitInfo.userMetadata``:
        lakeclone's query id, clock time and parameters) from its settings. With
        several sessions in one JVM (``spark.newSession()``: a streaming
        client's, say) it must be this Lake's, and after the block another
        session's work on this thread must not find this one active.
        """
        sessions = self.cls("org.apache.spark.sql.SparkSession")
        previous = sessions.getActiveSession()
        sessions.setActiveSession(self.session)
        try:
            yield
        finally:
            if previous.isDefined():
                sessions.setActiveSession(previous.get())
            else:
                sessions.clearActiveSession()

    def action(self, json_text: str) -> JavaObject:
        """A Delta action (add, metaData, ...) read from its JSON form by Delta itself."""
        return self.cls("org.apache.spark.sql.delta.actions.Action").fromJson(json_text)

    def operations(self) -> JavaObject:
        return self.cls("org.apache.spark.sql.delta.DeltaOperations")
