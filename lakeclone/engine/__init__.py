"""The statement engine: resolves names, plans reads and writes, runs them on Spark."""
