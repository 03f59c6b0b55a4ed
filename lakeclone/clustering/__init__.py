"""Clustering: keys, SUSPEND/RESUME RECLUSTER, OPTIMIZE and automatic clustering."""

from lakeclone.clustering import keys, optimize

__all__ = ["keys", "optimize"]
