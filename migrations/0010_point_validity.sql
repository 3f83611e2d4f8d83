-- A level that is not valid leaves its own points, not its whole run: runs.valid now says whether
-- any level of the run is valid (the run enters a base history for those levels), points.valid
-- whether the point's level is valid for its measure (trends, change points and badges skip the
-- others). Runs stored before keep runs.valid as it was: one invalid level still leaves them out.
ALTER TABLE points ADD COLUMN valid INTEGER NOT NULL DEFAULT 1;
