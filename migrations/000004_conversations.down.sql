DROP TABLE learnings;
DELETE FROM review_runs WHERE mode = 'answer';
DROP INDEX review_runs_one_running_per_pr;
DROP INDEX review_runs_one_answer_per_pr;
CREATE UNIQUE INDEX review_runs_one_running_per_pr ON review_runs (repository, pr_number) WHERE status = 'running';
ALTER TABLE review_runs
    DROP COLUMN answer,
    DROP COLUMN answer_comment_id,
    DROP COLUMN classification,
    DROP CONSTRAINT review_runs_pr_identity,
    ADD CONSTRAINT review_runs_pr_identity CHECK ((mode = 'pr') = (repository IS NOT NULL AND pr_number IS NOT NULL)),
    DROP CONSTRAINT review_runs_mode_check,
    ADD CONSTRAINT review_runs_mode_check CHECK (mode IN ('pr', 'diff', 'local'));
