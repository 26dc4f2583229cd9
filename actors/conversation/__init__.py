"""The History and Session actors, and the spare sessions prepared agents keep."""
