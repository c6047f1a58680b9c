"""What a request cost and where its time went: per-stage timings and traces
(:mod:`.telemetry`)."""

__all__ = ["telemetry"]  # the submodule is the API: import it by name
