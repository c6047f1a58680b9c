"""Code mode: the ``execute`` meta-tool runs a Python program that calls tools, each call
one guarded ``Gateway.execute`` with the caller's context, in a sandbox with limits
(:mod:`.runner`); a program's journal lets a retried program replay the calls it already
made instead of running them again (:mod:`.journal`). docs/code-mode.md."""

from .runner import DEFAULT_LIMITS, EXECUTE_NAME, CodeLimits, CodeRunner, code_runner, execute_tool

__all__ = ["DEFAULT_LIMITS", "EXECUTE_NAME", "CodeLimits", "CodeRunner", "code_runner", "execute_tool"]
