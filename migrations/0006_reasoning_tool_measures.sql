-- Reasoning and tool-calling streams: time to first answer token, reasoning time and tokens,
-- time to the first tool call.
INSERT INTO measures (id, name, unit, direction) VALUES (19, 'ttfat_p50_ms', 'ms', 'lower');
INSERT INTO measures (id, name, unit, direction) VALUES (20, 'ttfat_p95_ms', 'ms', 'lower');
INSERT INTO measures (id, name, unit, direction) VALUES (21, 'ttfat_p99_ms', 'ms', 'lower');
INSERT INTO measures (id, name, unit, direction) VALUES (22, 'reasoning_p50_ms', 'ms', 'lower');
INSERT INTO measures (id, name, unit, direction) VALUES (23, 'reasoning_tokens_p50', 'tokens', 'lower');
INSERT INTO measures (id, name, unit, direction) VALUES (24, 'tt_first_tool_call_p50_ms', 'ms', 'lower');
