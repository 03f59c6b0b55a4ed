"""Delta Lake tables: the transaction log (through delta-rs) and the data files (through Spark)."""

from lakeclone.delta.log import Commit, DataFile, DeltaLog, Snapshot
from lakeclone.delta.writer import ROW_ID, write_data_files

__all__ = ["ROW_ID", "Commit", "DataFile", "DeltaLog", "Snapshot", "write_data_files"]
