"""What survives a restart: the state folder, private files, SQLite stores, transcripts."""
