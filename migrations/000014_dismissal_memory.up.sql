-- The memory of dismissals (docs/quality.md): a new finding similar to
-- enough findings writers dismissed in the repository is not posted but
-- recorded here, with the dismissals it matched (pull request, fingerprint,
-- comment, who, how, similarity). One row per finding of a pull request,
-- the last review's; revived_by/revived_at say a writer revived it.
-- Additive: new tables and a partial index.
CREATE TABLE suppressed_findings (
    repository  text        NOT NULL,
    pr_number   int         NOT NULL CHECK (pr_number > 0),
    fingerprint text        NOT NULL CHECK (fingerprint <> ''),
    repo_id     bigint      CHECK (repo_id > 0),
    finding     jsonb       NOT NULL CHECK (jsonb_typeof(finding) = 'object'),
    matches     jsonb       NOT NULL CHECK (jsonb_typeof(matches) = 'array'),
    head_sha    text        NOT NULL DEFAULT '',
    run_id      uuid        REFERENCES review_runs (id) ON DELETE SET NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    revived_by  text        NOT NULL DEFAULT '',
    revived_at  timestamptz,
    PRIMARY KEY (repository, pr_number, fingerprint),
    CONSTRAINT suppressed_findings_revived CHECK ((revived_at IS NULL) = (revived_by = ''))
);

-- Each revival of a suppressed finding: the dismissals made before it
-- that are similar to it no longer suppress anything (nor findings
-- similar to it). Kept apart from suppressed_findings so that a finding
-- suppressed again (by dismissals made after) keeps its revival.
CREATE TABLE finding_revivals (
    id          bigserial   PRIMARY KEY,
    repository  text        NOT NULL,
    pr_number   int         NOT NULL CHECK (pr_number > 0),
    fingerprint text        NOT NULL CHECK (fingerprint <> ''),
    repo_id     bigint      CHECK (repo_id > 0),
    finding     jsonb       NOT NULL CHECK (jsonb_typeof(finding) = 'object'),
    revived_by  text        NOT NULL CHECK (revived_by <> ''),
    revived_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX finding_revivals_repository_idx ON finding_revivals (repository, revived_at DESC);

-- A review reads the repository's most recent dismissals.
CREATE INDEX pr_findings_dismissed_idx ON pr_findings (repository, updated_at DESC) WHERE state = 'dismissed';
