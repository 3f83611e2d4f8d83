-- Jobs per GPU per hour: a level's complete jobs per hour over the GPUs the telemetry read.
INSERT INTO measures (id, name, unit, direction) VALUES (35, 'jobs_per_hour_per_gpu', 'jobs/h', 'higher');
