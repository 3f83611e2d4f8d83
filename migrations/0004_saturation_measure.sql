-- --mode search stores its answer as a measure of its own: the highest rate under SLO.
INSERT INTO measures (id, name, unit, direction) VALUES (18, 'saturation_rps', 'req/s', 'higher');
