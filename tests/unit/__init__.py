"""Pure units: decisions and wire formats tested as plain data, without trio, sockets or subprocesses."""
