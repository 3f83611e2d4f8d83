-- The server's start: the Action's server-command, from its start to ready, as a run's measure.
INSERT INTO measures (id, name, unit, direction) VALUES (33, 'startup_s', 's', 'lower');
