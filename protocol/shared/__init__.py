"""Cross-cutting plain data: JSON-RPC framing, strict structuring of wire JSON, incremental decoding, redaction, named failures, the settings."""
