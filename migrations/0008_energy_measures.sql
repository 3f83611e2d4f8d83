-- GPU energy and cost per level: tokens per joule, joules per output token, mean GPU power,
-- dollars per million output and total tokens.
INSERT INTO measures (id, name, unit, direction) VALUES (25, 'output_tok_per_j', 'tok/J', 'higher');
INSERT INTO measures (id, name, unit, direction) VALUES (26, 'j_per_output_tok', 'J', 'lower');
INSERT INTO measures (id, name, unit, direction) VALUES (27, 'gpu_power_mean_w', 'W', 'lower');
INSERT INTO measures (id, name, unit, direction) VALUES (28, 'usd_per_m_output_tok', 'USD', 'lower');
INSERT INTO measures (id, name, unit, direction) VALUES (29, 'usd_per_m_total_tok', 'USD', 'lower');
