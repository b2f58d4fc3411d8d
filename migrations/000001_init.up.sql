-- MergeGuard schema: one coherent model for installations, webhook intake,
-- review runs (which are also the durable job queue), findings, agent results
-- and the per-run event log. The invariants the application relies on are
-- enforced here, in the database.

CREATE TABLE installations (
    id            bigint PRIMARY KEY,               -- GitHub installation id
    account_login text        NOT NULL,
    account_type  text        NOT NULL DEFAULT '',  -- Organization | User
    suspended_at  timestamptz,
    deleted_at    timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE repositories (
    id              bigint PRIMARY KEY,             -- GitHub repository id
    installation_id bigint      NOT NULL REFERENCES installations (id) ON DELETE CASCADE,
    full_name       text        NOT NULL CHECK (full_name LIKE '%_/_%'),
    private         boolean     NOT NULL DEFAULT false,
    removed_at      timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
-- A name belongs to one live repository; a removed row keeps its old name
-- without blocking a new repository (deleted and recreated, or transferred).
CREATE UNIQUE INDEX repositories_full_name_key ON repositories (lower(full_name)) WHERE removed_at IS NULL;
CREATE INDEX repositories_installation_idx ON repositories (installation_id);

-- Per pull request switches set by comment commands (/mergeguard pause).
CREATE TABLE pull_requests (
    repository text        NOT NULL,                -- owner/name
    number     int         NOT NULL CHECK (number > 0),
    paused     boolean     NOT NULL DEFAULT false,
    changed_by text        NOT NULL DEFAULT '',
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (repository, number)
);

-- Every webhook delivery once: the primary key makes redeliveries no-ops.
CREATE TABLE webhook_deliveries (
    delivery_id     text PRIMARY KEY CHECK (delivery_id <> ''),
    event           text        NOT NULL,
    action          text        NOT NULL DEFAULT '',
    installation_id bigint,
    repository      text,
    outcome         text        NOT NULL DEFAULT 'received',
    detail          text        NOT NULL DEFAULT '',
    received_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_deliveries_received_idx ON webhook_deliveries (received_at DESC);

-- A review run is one review, whatever its end, and also the durable job
-- that produces it: workers claim queued runs with a lease they renew.
CREATE TABLE review_runs (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    mode              text        NOT NULL CHECK (mode IN ('pr', 'diff', 'local')),
    trigger           text        NOT NULL CHECK (trigger IN ('webhook', 'command', 'api', 'cli')),
    status            text        NOT NULL DEFAULT 'queued'
                      CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'skipped', 'superseded')),
    status_reason     text        NOT NULL DEFAULT '',
    installation_id   bigint,
    repository        text,                          -- owner/name
    pr_number         int CHECK (pr_number > 0),
    head_sha          text        NOT NULL DEFAULT '',
    base_sha          text        NOT NULL DEFAULT '',
    branch            text        NOT NULL DEFAULT '',
    delivery_id       text REFERENCES webhook_deliveries (delivery_id) ON DELETE SET NULL,
    requested_by      text        NOT NULL DEFAULT '',
    options           jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(options) = 'object'),
    diff_text         text,

    -- queue
    attempts          int         NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    max_attempts      int         NOT NULL DEFAULT 3 CHECK (max_attempts > 0),
    run_after         timestamptz NOT NULL DEFAULT now(),
    locked_by         text,
    lease_expires_at  timestamptz,
    cancel_requested  boolean     NOT NULL DEFAULT false,

    -- results
    verdict           text CHECK (verdict IN ('approve', 'request_changes', 'comment')),
    summary           text        NOT NULL DEFAULT '',
    confidence        double precision CHECK (confidence BETWEEN 0 AND 1),
    stats             jsonb,
    result            jsonb,                         -- the ReviewVerdict
    error             text        NOT NULL DEFAULT '',
    model             text        NOT NULL DEFAULT '',
    input_tokens      int         NOT NULL DEFAULT 0,
    output_tokens     int         NOT NULL DEFAULT 0,
    total_cost        double precision NOT NULL DEFAULT 0,
    event_seq         int         NOT NULL DEFAULT 0,

    -- posting: post_started_at is claimed once before calling GitHub, so a
    -- retried job knows to look for its review instead of posting again.
    post_started_at   timestamptz,
    posted_review_id  bigint,
    posted_at         timestamptz,

    created_at        timestamptz NOT NULL DEFAULT now(),
    started_at        timestamptz,
    finished_at       timestamptz,
    duration_ms       bigint,

    CONSTRAINT review_runs_pr_identity CHECK ((mode = 'pr') = (repository IS NOT NULL AND pr_number IS NOT NULL)),
    CONSTRAINT review_runs_diff_text CHECK (mode <> 'diff' OR diff_text IS NOT NULL),
    CONSTRAINT review_runs_running_lease CHECK (status <> 'running' OR (lease_expires_at IS NOT NULL AND locked_by IS NOT NULL)),
    CONSTRAINT review_runs_finished_at CHECK (status IN ('queued', 'running') OR finished_at IS NOT NULL),
    CONSTRAINT review_runs_post_claimed CHECK (posted_review_id IS NULL OR post_started_at IS NOT NULL)
);
-- One review at a time per pull request.
CREATE UNIQUE INDEX review_runs_one_running_per_pr ON review_runs (repository, pr_number) WHERE status = 'running';
-- One delivery enqueues at most one run; one GitHub review belongs to one run.
CREATE UNIQUE INDEX review_runs_delivery_key ON review_runs (delivery_id) WHERE delivery_id IS NOT NULL;
CREATE UNIQUE INDEX review_runs_posted_review_key ON review_runs (posted_review_id) WHERE posted_review_id IS NOT NULL;
CREATE INDEX review_runs_queue_idx ON review_runs (run_after, created_at) WHERE status = 'queued';
-- Enqueue looks up the queued runs of a pull request to supersede them.
CREATE INDEX review_runs_queued_pr_idx ON review_runs (repository, pr_number) WHERE status = 'queued';
CREATE INDEX review_runs_lease_idx ON review_runs (lease_expires_at) WHERE status = 'running';
CREATE INDEX review_runs_pr_idx ON review_runs (repository, pr_number, created_at DESC);
CREATE INDEX review_runs_created_idx ON review_runs (created_at DESC);
CREATE INDEX review_runs_installation_day_idx ON review_runs (installation_id, created_at);

-- Wake idle workers when a job is queued.
CREATE FUNCTION review_runs_notify_queued() RETURNS trigger AS $$
BEGIN
    IF NEW.status = 'queued' THEN
        PERFORM pg_notify('mergeguard_jobs', NEW.id::text);
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER review_runs_queued AFTER INSERT OR UPDATE OF status, run_after ON review_runs
    FOR EACH ROW EXECUTE FUNCTION review_runs_notify_queued();

-- Findings always belong to a run; a fingerprint appears once per run.
CREATE TABLE findings (
    id                  bigserial PRIMARY KEY,
    run_id              uuid        NOT NULL REFERENCES review_runs (id) ON DELETE CASCADE,
    file_path           text        NOT NULL CHECK (file_path <> ''),
    line_start          int         NOT NULL CHECK (line_start >= 0),
    line_end            int         NOT NULL,
    side                text        NOT NULL CHECK (side IN ('LEFT', 'RIGHT')),
    severity            text        NOT NULL CHECK (severity IN ('critical', 'warning', 'info', 'style')),
    category            text        NOT NULL CHECK (category IN ('security', 'bug', 'performance', 'quality')),
    title               text        NOT NULL,
    description         text        NOT NULL DEFAULT '',
    suggestion          text        NOT NULL DEFAULT '',
    verification_status text        NOT NULL CHECK (verification_status IN ('verified', 'likely', 'unverified', 'false_positive')),
    confidence          double precision NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    code_snippet        text        NOT NULL DEFAULT '',
    agent               text        NOT NULL DEFAULT '',
    reason              text        NOT NULL DEFAULT '',
    fingerprint         text        NOT NULL CHECK (fingerprint <> ''),
    -- where the finding went on GitHub: not posted, an inline comment, the
    -- review body, a file-level comment, or already on the PR from a past run.
    posted              text        NOT NULL DEFAULT 'no' CHECK (posted IN ('no', 'inline', 'body', 'file', 'duplicate')),
    github_comment_id   bigint,
    created_at          timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT findings_line_range CHECK (line_end >= line_start),
    UNIQUE (run_id, fingerprint)
);
CREATE INDEX findings_fingerprint_idx ON findings (fingerprint);

CREATE TABLE agent_results (
    id              bigserial PRIMARY KEY,
    run_id          uuid        NOT NULL REFERENCES review_runs (id) ON DELETE CASCADE,
    agent           text        NOT NULL,
    stage           text        NOT NULL DEFAULT '',
    status          text        NOT NULL CHECK (status IN ('success', 'truncated', 'error', 'timeout')),
    issues          int         NOT NULL DEFAULT 0 CHECK (issues >= 0),
    elapsed_ms      bigint      NOT NULL DEFAULT 0 CHECK (elapsed_ms >= 0),
    turns           int         NOT NULL DEFAULT 0 CHECK (turns >= 0),
    input_tokens    int         NOT NULL DEFAULT 0 CHECK (input_tokens >= 0),
    output_tokens   int         NOT NULL DEFAULT 0 CHECK (output_tokens >= 0),
    total_cost      double precision NOT NULL DEFAULT 0 CHECK (total_cost >= 0),
    error           text        NOT NULL DEFAULT '',
    error_type      text        NOT NULL DEFAULT '',
    timeout_seconds double precision,
    created_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT agent_results_error_message CHECK (status <> 'error' OR error <> ''),
    CONSTRAINT agent_results_timeout_seconds CHECK (status <> 'timeout' OR timeout_seconds IS NOT NULL)
);
CREATE INDEX agent_results_run_idx ON agent_results (run_id);

-- The pipeline's event log, ordered per run by seq (assigned under the run
-- row's lock, so commit order is seq order). Inserts NOTIFY listeners in any
-- replica so live streams need nothing but Postgres.
CREATE TABLE review_events (
    run_id     uuid        NOT NULL REFERENCES review_runs (id) ON DELETE CASCADE,
    seq        int         NOT NULL CHECK (seq > 0),
    type       text        NOT NULL CHECK (type IN ('pipeline.started', 'agent.started', 'tool.called', 'agent.handoff',
                                                     'finding.detected', 'finding.verified', 'pipeline.completed', 'pipeline.failed')),
    stage      text        NOT NULL DEFAULT '',
    agent      text        NOT NULL DEFAULT '',
    data       jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(data) = 'object'),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, seq)
);

CREATE FUNCTION review_events_notify() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('mergeguard_events', NEW.run_id::text || ':' || NEW.seq::text);
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER review_events_inserted AFTER INSERT ON review_events
    FOR EACH ROW EXECUTE FUNCTION review_events_notify();
