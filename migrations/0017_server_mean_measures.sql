-- The server's own mean time per phase over a level's window, from its /metrics histograms.
INSERT INTO measures (id, name, unit, direction) VALUES (44, 'server_mean_queue_ms', 'ms', 'lower');
INSERT INTO measures (id, name, unit, direction) VALUES (45, 'server_mean_prefill_ms', 'ms', 'lower');
INSERT INTO measures (id, name, unit, direction) VALUES (46, 'server_mean_decode_ms', 'ms', 'lower');
