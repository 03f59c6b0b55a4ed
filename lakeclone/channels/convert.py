"""Python values to a table's column types, as Snowpipe Streaming converts them.

Each failed conversion is an error for its row naming its column; a row with
any error is not loaded. Strings become dates, timestamps, booleans, numbers,
binary (from hex) and VARIANT, ARRAY and OBJECT (parsed as JSON: a value
that is not an array goes into an ARRAY as an array of one, one that is not
an object is refused by an OBJECT); epoch numbers (and numeric strings)
become dates and timestamps with Snowflake's rule for their unit.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lakeclone.engine.schema import declared_semi_structured
from lakeclone.errors import InsertError

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql.types import DataType, StructField, StructType


class ConversionError(ValueError):
    """A value its column's type cannot hold."""


_TRUE = {"true", "t", "yes", "y", "on", "1"}
_FALSE = {"false", "f", "no", "n", "off", "0"}

# Snowflake's AUTO date and timestamp formats, as strptime formats (the seed's list).
_DATE_FORMATS = ("%Y-%m-%d", "%d-%b-%Y", "%m/%d/%Y")
_TIME_PART = ("%H:%M:%S.%f", "%H:%M:%S", "%H:%M")
_TIMESTAMP_FORMATS = (
    *(
        f"{date}{sep}{time}{zone}"
        for date in _DATE_FORMATS
        for sep in (" ", "T")
        for time in _TIME_PART
        for zone in ("", "%z", " %z")
    ),
    "%a, %d %b %Y %H:%M:%S %z",  # RFC 2822, as in HTTP headers and mail
    "%a %b %d %H:%M:%S %z %Y",  # Twitter's
    *_DATE_FORMATS,
)
_INTEGER_TEXT = re.compile(r"^[+-]?\d+$")
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)

# Snowflake's rule for an epoch number's unit: below 31536000000 it is seconds,
# then milliseconds, microseconds, and nanoseconds above 31536000000000000.
_UNIT_LIMITS = ((31_536_000_000, 1), (31_536_000_000_000, 1_000), (31_536_000_000_000_000, 1_000_000))


def _epoch(value: int) -> dt.datetime:
    for limit, per_second in _UNIT_LIMITS:
        if abs(value) < limit:
            return _EPOCH + dt.timedelta(microseconds=value * 1_000_000 // per_second)
    return _EPOCH + dt.timedelta(microseconds=value // 1_000)


def _timestamp(value: Any) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    if isinstance(value, bool):
        raise ConversionError(f"Boolean value {value} is not recognized as a timestamp")
    if isinstance(value, int):
        return _epoch(value)
    if isinstance(value, str):
        text = value.strip()
        if _INTEGER_TEXT.match(text):
            return _epoch(int(text))
        # fromisoformat covers ISO 8601 with any fraction and offset, and a trailing Z.
        try:
            return dt.datetime.fromisoformat(text)
        except ValueError:
            pass
        for pattern in _TIMESTAMP_FORMATS:
            try:
                return dt.datetime.strptime(text, pattern)
            except ValueError:
                continue
    raise ConversionError(f"Timestamp '{value}' is not recognized")


def _to_timestamp(value: Any) -> dt.datetime:
    """An instant (TIMESTAMP_LTZ/TZ): a value without an offset is in UTC."""
    moment = _timestamp(value)
    return moment.replace(tzinfo=dt.timezone.utc) if moment.tzinfo is None else moment.astimezone(dt.timezone.utc)


def _to_timestamp_ntz(value: Any) -> dt.datetime:
    """A wall-clock time (TIMESTAMP_NTZ): an offset given is dropped, as Snowflake drops it."""
    if type(value) is dt.datetime and value.tzinfo is None:
        return value
    return _timestamp(value).replace(tzinfo=None)


def _to_date(value: Any) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    try:
        return _timestamp(value).date()
    except ConversionError:
        raise ConversionError(f"Date '{value}' is not recognized") from None


def _to_boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float, decimal.Decimal)):
        return value != 0
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise ConversionError(f"Boolean value '{value}' is not recognized")


def _number(value: Any) -> decimal.Decimal:
    if isinstance(value, bool):
        raise ConversionError(f"Numeric value '{value}' is not recognized")
    if isinstance(value, (int, decimal.Decimal)):
        return decimal.Decimal(value)
    if isinstance(value, float):
        return decimal.Decimal(repr(value))
    if isinstance(value, str):
        try:
            return decimal.Decimal(value.strip())
        except decimal.InvalidOperation:
            pass
    raise ConversionError(f"Numeric value '{value}' is not recognized")


def _integer(bits: int) -> Callable[[Any], int]:
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1

    def convert(value: Any) -> int:
        if type(value) is int:  # the common case, without a Decimal
            if not low <= value <= high:
                raise ConversionError(f"Numeric value '{value}' is out of range")
            return value
        number = _number(value)
        if not number.is_finite():
            raise ConversionError(f"Numeric value '{value}' is not recognized")
        whole = int(number.to_integral_value(rounding=decimal.ROUND_HALF_UP))
        if not low <= whole <= high:
            raise ConversionError(f"Numeric value '{value}' is out of range")
        return whole

    return convert


def _decimal(precision: int, scale: int) -> Callable[[Any], decimal.Decimal]:
    quantum = decimal.Decimal(1).scaleb(-scale)

    def convert(value: Any) -> decimal.Decimal:
        number = _number(value)
        if not number.is_finite():
            raise ConversionError(f"Numeric value '{value}' is not recognized")
        # Whole digits beyond precision - scale do not fit (and would overflow quantize's context).
        if number != 0 and number.adjusted() + 1 > precision - scale:
            raise ConversionError(f"Value {value} does not fit NUMBER({precision}, {scale})")
        return number.quantize(quantum, rounding=decimal.ROUND_HALF_UP)

    return convert


def _to_double(value: Any) -> float:
    if type(value) is float:  # the common case, without a Decimal
        return value
    if isinstance(value, str) and value.strip().lower() in {"nan", "inf", "-inf", "infinity", "-infinity"}:
        return float(value.strip())
    return float(_number(value))


def _to_string(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, decimal.Decimal)):
        return str(value)
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    raise ConversionError(f"Value of type {type(value).__name__} cannot be stored as VARCHAR")


def _to_binary(value: Any) -> bytes:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        try:
            return bytes.fromhex(value)
        except ValueError:
            raise ConversionError(f"Binary value '{value}' is not a valid hex string") from None
    raise ConversionError(f"Value of type {type(value).__name__} cannot be stored as BINARY")


def _json_default(value: Any) -> Any:
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    raise TypeError(type(value).__name__)


def _parsed_json(value: Any) -> Any:
    """A string as the JSON value it holds; any other value as it is."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        raise ConversionError(f"Error parsing JSON: '{value[:80]}'") from None


def _json_text(value: Any, kind: str) -> str:
    """A Python value as JSON text for a column of ``kind`` (VARIANT, ARRAY, OBJECT)."""
    try:
        return json.dumps(value, default=_json_default)
    except (TypeError, ValueError) as error:
        raise ConversionError(f"Value cannot be stored as {kind}: {error}") from None


def _to_variant_json(value: Any) -> str:
    """VARIANT as JSON text (Spark's ``parse_json`` makes the variant): a string is parsed as JSON."""
    if isinstance(value, str):
        _parsed_json(value)  # checked, and passed on as written
        return value
    return _json_text(value, "VARIANT")


def _to_array_json(value: Any) -> str:
    """ARRAY as JSON text: a list (or a JSON array) as it is; any other value in an array of one, as Snowpipe Streaming does."""
    parsed = _parsed_json(value)
    return _json_text(parsed if isinstance(parsed, (list, tuple)) else [parsed], "ARRAY")


def _to_object_json(value: Any) -> str:
    """OBJECT as JSON text: a dict with string keys (or a JSON object); anything else is refused."""
    parsed = _parsed_json(value)
    if not isinstance(parsed, Mapping) or not all(isinstance(key, str) for key in parsed):
        raise ConversionError(f"Value of type {type(value).__name__} cannot be stored as OBJECT: it is not a JSON object")
    return _json_text(parsed, "OBJECT")


def _to_array(element: Callable[[Any], Any]) -> Callable[[Any], list[Any]]:
    def convert(value: Any) -> list[Any]:
        value = _parsed_json(value)
        if not isinstance(value, (list, tuple)):
            raise ConversionError(f"Value of type {type(value).__name__} cannot be stored as ARRAY")
        return [None if item is None else element(item) for item in value]

    return convert


def converter(data_type: DataType) -> Callable[[Any], Any]:
    """The conversion of a Python value to ``data_type`` (raises ConversionError, or UnsupportedType)."""
    from pyspark.sql import types as T

    simple: Mapping[type[DataType], Callable[[Any], Any]] = {
        T.StringType: _to_string,
        T.BooleanType: _to_boolean,
        T.ByteType: _integer(8),
        T.ShortType: _integer(16),
        T.IntegerType: _integer(32),
        T.LongType: _integer(64),
        T.DoubleType: _to_double,
        T.FloatType: _to_double,
        T.DateType: _to_date,
        T.TimestampType: _to_timestamp,
        T.TimestampNTZType: _to_timestamp_ntz,
        T.BinaryType: _to_binary,
        T.VariantType: _to_variant_json,
    }
    if type(data_type) in simple:
        return simple[type(data_type)]
    if isinstance(data_type, T.DecimalType):
        return _decimal(data_type.precision, data_type.scale)
    if isinstance(data_type, T.ArrayType):
        return _to_array(converter(data_type.elementType))
    raise UnsupportedColumnType(data_type.simpleString())


def field_converter(field: StructField) -> Callable[[Any], Any]:
    """The conversion of a Python value to a column: its type's, or a semi-structured ARRAY's or OBJECT's."""
    from pyspark.sql.types import ArrayType, VariantType

    if declared_semi_structured(field) == "OBJECT":
        return _to_object_json
    if field.dataType == ArrayType(VariantType()):
        return _to_array_json
    return converter(field.dataType)


def json_text(field: StructField) -> bool:
    """Whether a column's values reach Spark as JSON text: a VARIANT, or an array of them (a semi-structured ARRAY)."""
    from pyspark.sql.types import ArrayType, VariantType

    return field.dataType in (VariantType(), ArrayType(VariantType()))


class UnsupportedColumnType(Exception):
    """A column type channels do not load (GEOGRAPHY, GEOMETRY, maps, structs)."""


# The Python types each column type's conversion returns unchanged. A batch whose
# values are all of these skips the per-value conversion: pyarrow takes them as
# they are and refuses what does not fit (an int beyond the column's width, a
# decimal that would need rounding), which sends the batch the row-by-row way.
# Not here: wall-clock timestamps (an aware datetime loses its offset, where
# pyarrow would shift it to UTC) and VARIANT (a string is checked as JSON).
def _unchanged_types(data_type: DataType) -> frozenset[type]:
    from pyspark.sql import types as T

    integral = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
    if isinstance(data_type, T.StringType):
        return frozenset({str})
    if isinstance(data_type, T.BooleanType):
        return frozenset({bool})
    if isinstance(data_type, integral):
        return frozenset({int})
    if isinstance(data_type, (T.DoubleType, T.FloatType)):
        return frozenset({float})
    if isinstance(data_type, T.DecimalType):
        return frozenset({decimal.Decimal})
    if isinstance(data_type, T.DateType):
        return frozenset({dt.date})
    if isinstance(data_type, T.TimestampType):
        return frozenset({dt.datetime})  # naive ones are UTC, aware ones are shifted to UTC: as _to_timestamp does
    if isinstance(data_type, T.BinaryType):
        return frozenset({bytes})
    return frozenset()


@dataclass(frozen=True)
class ConvertedRows:
    """A batch converted: its rows without errors, as an Arrow table of the table's columns, and every error.

    Attributes:
        table: the rows that converted, in their order (VARIANT values as JSON text).
        errors: each error, by row then column.
    """

    table: pa.Table
    errors: tuple[InsertError, ...]


@dataclass(frozen=True)
class RowConverter:
    """Converts rows (dicts by column name, matched case-insensitively) to an Arrow table of the table's columns.

    A batch of dicts with the same keys, none of them failing, is converted
    column by column; any other batch row by row, which names each error.
    """

    names: tuple[str, ...]
    nullable: tuple[bool, ...]
    converters: tuple[Callable[[Any], Any], ...]
    unchanged: tuple[frozenset[type], ...]
    arrow_schema: pa.Schema

    @classmethod
    def for_schema(cls, schema: StructType) -> RowConverter:
        return cls(
            tuple(f.name for f in schema.fields),
            tuple(f.nullable for f in schema.fields),
            tuple(field_converter(f) for f in schema.fields),
            tuple(_unchanged_types(f.dataType) for f in schema.fields),
            _arrow_schema(schema),
        )

    def convert(self, rows: Sequence[Any], token: str | None) -> ConvertedRows:
        """The rows that convert as one Arrow table, and every error of the others (``token`` goes in each error)."""
        columns = self._columns(rows)
        if columns is not None:
            try:
                return ConvertedRows(self._table(columns, len(rows)), ())
            except (ValueError, TypeError, ArithmeticError):
                pass  # a value pyarrow refused (out of its column's range): the row-by-row way names it
        converted, errors = self.convert_rows(rows, token)
        good = [values for values, found in zip(converted, errors, strict=True) if not found]
        columns = [list(column) for column in zip(*good, strict=True)] if good else [[] for _ in self.names]
        return ConvertedRows(self._table(columns, len(good)), tuple(e for found in errors for e in found))

    def _columns(self, rows: Sequence[Any]) -> list[list[Any] | None] | None:
        """Each column's converted values (None: a column no row names), or None when the batch must go row by row.

        Only for a batch of dicts that all have the first one's keys, each
        naming a column, with no value failing and no NULL in a NOT NULL column.
        """
        if not rows or not isinstance(rows[0], dict):
            return None
        keys = rows[0].keys()
        positions = {name.upper(): index for index, name in enumerate(self.names)}
        by_key = {key: positions.get(str(key).upper()) for key in keys}
        if None in by_key.values() or len(set(by_key.values())) != len(by_key):
            return None
        try:  # map rather than a generator: this runs once per row
            if not all(map(keys.__eq__, map(dict.keys, rows))):
                return None
        except TypeError:  # a row that is not a dict
            return None
        columns: list[list[Any] | None] = [None] * len(self.names)
        for key, position in by_key.items():
            assert position is not None
            values = list(map(operator.itemgetter(key), rows))
            if not set(map(type, values)) - {type(None)} <= self.unchanged[position]:
                convert = self.converters[position]
                try:
                    values = [None if value is None else convert(value) for value in values]
                except (ValueError, ArithmeticError, TypeError):  # ConversionError is a ValueError
                    return None
            columns[position] = values
        for position, column in enumerate(columns):
            if not self.nullable[position] and (column is None or None in column):
                return None
        return columns

    def _table(self, columns: Sequence[list[Any] | None], rows: int) -> pa.Table:
        import pyarrow as pa

        arrays = [
            pa.nulls(rows, field.type) if values is None else pa.array(values, type=field.type)
            for values, field in zip(columns, self.arrow_schema, strict=True)
        ]
        return pa.Table.from_arrays(arrays, schema=self.arrow_schema)

    def convert_rows(self, rows: Sequence[Any], token: str | None) -> tuple[list[tuple[Any, ...]], list[list[InsertError]]]:
        """Each row converted (or None where it has errors), and each row's errors."""
        positions = {name.upper(): index for index, name in enumerate(self.names)}
        # The keys rows use, resolved once per batch rather than once per row.
        by_key: dict[Any, int | None] = {}
        required = [(position, name) for position, name in enumerate(self.names) if not self.nullable[position]]
        converters = self.converters
        converted: list[tuple[Any, ...]] = []
        errors: list[list[InsertError]] = []
        for index, row in enumerate(rows):
            found: list[InsertError] = []
            values: list[Any] = [None] * len(self.names)
            if not isinstance(row, Mapping):
                found.append(InsertError(index, None, f"A row must be a dict, not {type(row).__name__}", token))
            else:
                for key, value in row.items():
                    try:
                        position = by_key[key]
                    except KeyError:
                        position = by_key[key] = positions.get(str(key).upper())
                    if position is None:
                        found.append(InsertError(index, str(key), f"Column {key} does not exist in the table", token))
                    elif value is not None:
                        try:
                            values[position] = converters[position](value)
                        except ConversionError as error:
                            found.append(InsertError(index, self.names[position], str(error), token))
                        except (ValueError, ArithmeticError, TypeError) as error:
                            message = f"Value '{value}' cannot be stored in the column: {error}"
                            found.append(InsertError(index, self.names[position], message, token))
                for position, name in required:
                    if values[position] is None and not any(e.column == name for e in found):
                        found.append(InsertError(index, name, "NULL result in a non-nullable column", token))
            converted.append(tuple(values))
            errors.append(found)
        return converted, errors


def staging_schema(schema: StructType) -> StructType:
    """The schema rows reach Spark in: VARIANT and ARRAY columns as JSON text, which Spark's ``parse_json`` reads."""
    from pyspark.sql.types import StringType, StructField, StructType

    return StructType([StructField(f.name, StringType(), True) if json_text(f) else f for f in schema.fields])


def _arrow_schema(schema: StructType) -> pa.Schema:
    """The staging schema's Arrow types (timestamps in microseconds, as Spark keeps them)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(staging_schema(schema), timezone="UTC")
