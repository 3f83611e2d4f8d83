-- Jobs: a conversation of --turns calls as one job (an agent's session): its time end to end and
-- how many one user completes in an hour.
INSERT INTO measures (id, name, unit, direction) VALUES (30, 'job_e2e_p50_s', 's', 'lower');
INSERT INTO measures (id, name, unit, direction) VALUES (31, 'job_e2e_p95_s', 's', 'lower');
INSERT INTO measures (id, name, unit, direction) VALUES (32, 'jobs_per_hour_per_user', 'jobs/h', 'higher');
