-- Back to names only: the repository ids are dropped (with their indexes).
DROP INDEX IF EXISTS learnings_repo_id_idx;
DROP INDEX IF EXISTS pr_findings_repo_id_idx;
DROP INDEX IF EXISTS review_runs_repo_id_idx;
ALTER TABLE learnings DROP COLUMN IF EXISTS repo_id;
ALTER TABLE pr_findings DROP COLUMN IF EXISTS repo_id;
ALTER TABLE review_runs DROP COLUMN IF EXISTS repo_id;
