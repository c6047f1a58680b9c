"""What a request cost and where its time went: per-stage timings and traces
(:mod:`.telemetry`)."""
