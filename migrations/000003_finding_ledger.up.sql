-- The finding ledger of each pull request (docs/architecture.md): every
-- finding by fingerprint with its state, where it was posted and the heads it
-- was seen at, so that reviews converge across pushes. Runs of the API and
-- the CLI have no ledger.
CREATE TABLE pr_findings (
    repository     text        NOT NULL,               -- owner/name
    pr_number      int         NOT NULL CHECK (pr_number > 0),
    fingerprint    text        NOT NULL CHECK (fingerprint <> ''),
    state          text        NOT NULL CHECK (state IN ('open', 'fixed', 'dismissed', 'outdated')),
    -- the finding as last reported or confirmed (review.Finding as JSON);
    -- file, severity and category are copied out for queries.
    finding        jsonb       NOT NULL CHECK (jsonb_typeof(finding) = 'object'),
    file_path      text        NOT NULL CHECK (file_path <> ''),
    severity       text        NOT NULL CHECK (severity IN ('critical', 'warning', 'info', 'style')),
    category       text        NOT NULL CHECK (category IN ('security', 'bug', 'performance', 'quality')),
    first_seen_sha text        NOT NULL CHECK (first_seen_sha <> ''),
    last_seen_sha  text        NOT NULL CHECK (last_seen_sha <> ''),
    fixed_sha      text        NOT NULL DEFAULT '',
    -- who changed the state last (a GitHub login or 'mergeguard') and how.
    state_by       text        NOT NULL DEFAULT '',
    state_how      text        NOT NULL DEFAULT '',
    first_run_id   uuid        REFERENCES review_runs (id) ON DELETE SET NULL,
    last_run_id    uuid        REFERENCES review_runs (id) ON DELETE SET NULL,
    -- where it was posted: the review comment and its thread's node id.
    comment_id     bigint      CHECK (comment_id > 0),
    thread_id      text        NOT NULL DEFAULT '',
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (repository, pr_number, fingerprint),
    CONSTRAINT pr_findings_fixed_sha CHECK (state <> 'fixed' OR fixed_sha <> ''),
    CONSTRAINT pr_findings_dismissed_how CHECK (state <> 'dismissed' OR state_how IN ('thread_resolved', 'command', 'feedback'))
);
CREATE INDEX pr_findings_comment_idx ON pr_findings (repository, pr_number, comment_id) WHERE comment_id IS NOT NULL;
CREATE INDEX pr_findings_thread_idx ON pr_findings (thread_id) WHERE thread_id <> '';

-- The history of each ledger entry: one row per state it entered, written
-- by the database itself so no path can change a state unrecorded.
CREATE TABLE pr_finding_history (
    id          bigserial PRIMARY KEY,
    repository  text        NOT NULL,
    pr_number   int         NOT NULL,
    fingerprint text        NOT NULL,
    state       text        NOT NULL,
    sha         text        NOT NULL DEFAULT '',
    by_login    text        NOT NULL DEFAULT '',
    how         text        NOT NULL DEFAULT '',
    run_id      uuid        REFERENCES review_runs (id) ON DELETE SET NULL,
    at          timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (repository, pr_number, fingerprint) REFERENCES pr_findings ON DELETE CASCADE
);
CREATE INDEX pr_finding_history_entry_idx ON pr_finding_history (repository, pr_number, fingerprint, id);

CREATE FUNCTION pr_findings_history() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'INSERT' OR OLD.state IS DISTINCT FROM NEW.state THEN
        INSERT INTO pr_finding_history (repository, pr_number, fingerprint, state, sha, by_login, how, run_id)
        VALUES (NEW.repository, NEW.pr_number, NEW.fingerprint, NEW.state,
                CASE WHEN NEW.state = 'fixed' THEN NEW.fixed_sha ELSE NEW.last_seen_sha END,
                NEW.state_by, NEW.state_how,
                -- the run that made the change: none when a person did
                CASE WHEN TG_OP = 'INSERT' OR NEW.last_run_id IS DISTINCT FROM OLD.last_run_id
                     THEN NEW.last_run_id END);
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER pr_findings_state AFTER INSERT OR UPDATE OF state ON pr_findings
    FOR EACH ROW EXECUTE FUNCTION pr_findings_history();

-- What a pull request run reviewed (full or incremental, and why), the
-- configuration it reviewed with, and its check run.
ALTER TABLE review_runs
    ADD COLUMN review_kind   text   NOT NULL DEFAULT '' CHECK (review_kind IN ('', 'full', 'incremental')),
    ADD COLUMN kind_reason   text   NOT NULL DEFAULT '',
    ADD COLUMN since_sha     text   NOT NULL DEFAULT '',
    ADD COLUMN config_digest text   NOT NULL DEFAULT '',
    ADD COLUMN check_run_id  bigint CHECK (check_run_id > 0);
