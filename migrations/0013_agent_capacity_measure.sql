-- Agent capacity: the most concurrent agent sessions whose calls met a tier (--agent-tier).
INSERT INTO measures (id, name, unit, direction) VALUES (34, 'agent_sessions', 'sessions', 'higher');
