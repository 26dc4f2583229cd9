"""Which conversation a request continues: reading, matching, markers, forks, held data, release, and what the actors say to each other."""
