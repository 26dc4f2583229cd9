"""The real wire: a `symposium vscodelm` subprocess over stdio, with Eliza, recording taps and misbehaving agents."""
