"""Measure search quality on a tool-retrieval data set (the ``toolscout eval`` contract)."""

from .dataset import EvalQuery, load_queries, load_tools
from .runner import EvalReport, Metrics, evaluate, run_eval

__all__ = ["EvalQuery", "EvalReport", "Metrics", "evaluate", "load_queries", "load_tools", "run_eval"]
