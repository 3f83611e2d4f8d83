-- The server's start to its first token (cold), and its warm restart to ready (--startup both).
INSERT INTO measures (id, name, unit, direction) VALUES (36, 'startup_first_token_s', 's', 'lower');
INSERT INTO measures (id, name, unit, direction) VALUES (37, 'startup_warm_s', 's', 'lower');
