-- E2E p50 and p95 split into queue, prefill, decode and client, from the server's per-request timings.
INSERT INTO measures (id, name, unit, direction) VALUES (47, 'e2e_p50_queue_ms', 'ms', 'lower');
INSERT INTO measures (id, name, unit, direction) VALUES (48, 'e2e_p50_prefill_ms', 'ms', 'lower');
INSERT INTO measures (id, name, unit, direction) VALUES (49, 'e2e_p50_decode_ms', 'ms', 'lower');
INSERT INTO measures (id, name, unit, direction) VALUES (50, 'e2e_p50_client_ms', 'ms', 'lower');
INSERT INTO measures (id, name, unit, direction) VALUES (51, 'e2e_p95_queue_ms', 'ms', 'lower');
INSERT INTO measures (id, name, unit, direction) VALUES (52, 'e2e_p95_prefill_ms', 'ms', 'lower');
INSERT INTO measures (id, name, unit, direction) VALUES (53, 'e2e_p95_decode_ms', 'ms', 'lower');
INSERT INTO measures (id, name, unit, direction) VALUES (54, 'e2e_p95_client_ms', 'ms', 'lower');
