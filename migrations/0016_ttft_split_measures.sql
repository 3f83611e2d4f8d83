-- TTFT p50 and p95 split into queue, prefill and client, from the server's per-request timings.
INSERT INTO measures (id, name, unit, direction) VALUES (38, 'ttft_p50_queue_ms', 'ms', 'lower');
INSERT INTO measures (id, name, unit, direction) VALUES (39, 'ttft_p50_prefill_ms', 'ms', 'lower');
INSERT INTO measures (id, name, unit, direction) VALUES (40, 'ttft_p50_client_ms', 'ms', 'lower');
INSERT INTO measures (id, name, unit, direction) VALUES (41, 'ttft_p95_queue_ms', 'ms', 'lower');
INSERT INTO measures (id, name, unit, direction) VALUES (42, 'ttft_p95_prefill_ms', 'ms', 'lower');
INSERT INTO measures (id, name, unit, direction) VALUES (43, 'ttft_p95_client_ms', 'ms', 'lower');
