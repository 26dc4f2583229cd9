"""What a conversation's Session does on each event: the turn machine, its events and rules, permissions, questions, edits, rendering, and the opening of a session."""
