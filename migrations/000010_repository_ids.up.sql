-- GitHub's numeric repository id on every run, ledger entry and learning,
-- so that what a person signed in with GitHub may see is decided by the
-- repository's identity, not by its name: a name can pass from a private
-- repository (renamed away) to a public one. The id comes from webhook
-- payloads (repository.id) and from GitHub's API for reviews of a
-- github_url; diff-text reviews have none. Rows written before this
-- migration have none either (GitHub cannot be asked offline which
-- repository a name meant then): they stay visible to token holders only.
-- Additive: nullable columns, no rewrite of existing rows.
ALTER TABLE review_runs ADD COLUMN repo_id bigint CONSTRAINT review_runs_repo_id_check CHECK (repo_id > 0);
ALTER TABLE pr_findings ADD COLUMN repo_id bigint CONSTRAINT pr_findings_repo_id_check CHECK (repo_id > 0);
ALTER TABLE learnings ADD COLUMN repo_id bigint CONSTRAINT learnings_repo_id_check CHECK (repo_id > 0);

-- Renames and transfers update the rows of one id; pages filter by it.
CREATE INDEX review_runs_repo_id_idx ON review_runs (repo_id, pr_number) WHERE repo_id IS NOT NULL;
CREATE INDEX pr_findings_repo_id_idx ON pr_findings (repo_id) WHERE repo_id IS NOT NULL;
CREATE INDEX learnings_repo_id_idx ON learnings (repo_id, status) WHERE repo_id IS NOT NULL;
