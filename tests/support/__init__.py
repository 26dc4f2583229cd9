"""Not tests: the fakes, drivers, agents and fixtures the tiers use (and `python -m tests.support.record_transcripts`)."""
