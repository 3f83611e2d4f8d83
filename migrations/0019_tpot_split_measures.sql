-- TPOT p50 split into the server's own time per output token and the client's.
INSERT INTO measures (id, name, unit, direction) VALUES (55, 'tpot_p50_decode_ms', 'ms', 'lower');
INSERT INTO measures (id, name, unit, direction) VALUES (56, 'tpot_p50_client_ms', 'ms', 'lower');
