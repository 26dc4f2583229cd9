"""What the machine allows: where writes land, which files are ours, how Windows starts programs."""
