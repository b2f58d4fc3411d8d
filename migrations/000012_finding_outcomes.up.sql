-- Each finding's outcome when its pull request closed (docs/quality.md):
-- addressed, dismissed (outcome_how says how), unaddressed (open when
-- merged) or abandoned (open when closed unmerged). Set once, by the first
-- closing that finds the entry without one, and never changed: a reopened
-- pull request continues its ledger and a later closing sets only the
-- outcomes of entries that have none. The outcome lives on the ledger
-- entry (one row a finding, no join to read it); outcome_source is the
-- model of the run that first reported the finding, or its analyzer,
-- copied at the close so that it survives the run's deletion.
-- Additive: nullable columns and constant defaults, no rewrite of existing
-- rows; the CHECK is added NOT VALID and validated apart, so the table is
-- not locked for the scan.
ALTER TABLE pr_findings
    ADD COLUMN outcome        text,
    ADD COLUMN outcome_how    text NOT NULL DEFAULT '',
    ADD COLUMN outcome_source text NOT NULL DEFAULT '',
    ADD COLUMN outcome_merged boolean,
    ADD COLUMN outcome_at     timestamptz;
ALTER TABLE pr_findings
    ADD CONSTRAINT pr_findings_outcome_check CHECK (
        (outcome IS NULL AND outcome_merged IS NULL AND outcome_at IS NULL)
        OR (outcome IN ('addressed', 'dismissed', 'unaddressed', 'abandoned')
            AND outcome_merged IS NOT NULL AND outcome_at IS NOT NULL)) NOT VALID;
ALTER TABLE pr_findings VALIDATE CONSTRAINT pr_findings_outcome_check;

-- The last closing of each pull request: merged or not, and when. Quality
-- reports count merged pull requests (with or without findings) from it.
-- A closing older than the one recorded changes nothing (out-of-order
-- deliveries).
CREATE TABLE pr_closings (
    repository      text        NOT NULL,
    pr_number       int         NOT NULL CHECK (pr_number > 0),
    installation_id bigint,
    repo_id         bigint      CHECK (repo_id > 0),
    merged          boolean     NOT NULL,
    closed_at       timestamptz NOT NULL,
    PRIMARY KEY (repository, pr_number)
);
CREATE INDEX pr_closings_closed_at_idx ON pr_closings (closed_at);
