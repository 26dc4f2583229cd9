"""The trio ground floor: channels, racing, the platform seam, the JSON-RPC peer, byte streams, backpressure."""
