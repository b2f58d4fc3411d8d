-- Conversations and learnings (docs/architecture.md). An answer to a person's
-- reply in a MergeGuard thread or to /mergeguard ask is a run of mode
-- 'answer': a durable job like a review (queue, leases, retries, budgets, one
-- per delivery), that never supersedes or waits for reviews.
ALTER TABLE review_runs
    DROP CONSTRAINT review_runs_mode_check,
    ADD CONSTRAINT review_runs_mode_check CHECK (mode IN ('pr', 'diff', 'local', 'answer')),
    DROP CONSTRAINT review_runs_pr_identity,
    ADD CONSTRAINT review_runs_pr_identity
        CHECK ((mode IN ('pr', 'answer')) = (repository IS NOT NULL AND pr_number IS NOT NULL)),
    -- the answer posted, its comment and how the model read the reply
    ADD COLUMN answer            text   NOT NULL DEFAULT '',
    ADD COLUMN answer_comment_id bigint CHECK (answer_comment_id > 0),
    ADD COLUMN classification    text   NOT NULL DEFAULT ''
        CHECK (classification IN ('', 'agree', 'disagree', 'question', 'fixed-elsewhere'));

-- One review at a time per pull request, and one answer: answers run
-- beside reviews, and one after another (a thread's answer limit counts
-- the answers before).
DROP INDEX review_runs_one_running_per_pr;
CREATE UNIQUE INDEX review_runs_one_running_per_pr ON review_runs (repository, pr_number)
    WHERE status = 'running' AND mode = 'pr';
CREATE UNIQUE INDEX review_runs_one_answer_per_pr ON review_runs (repository, pr_number)
    WHERE status = 'running' AND mode = 'answer';

-- What people taught MergeGuard about a repository: an instruction, for
-- the files a glob matches (all when empty), with where it came from.
-- Proposed learnings wait for a writer's /mergeguard learn (or the web UI);
-- active ones go into every later review of the repository.
CREATE TABLE learnings (
    id                bigserial PRIMARY KEY,
    repository        text        NOT NULL CHECK (repository LIKE '%_/_%'),
    instruction       text        NOT NULL CHECK (length(instruction) BETWEEN 1 AND 500),
    path_glob         text        NOT NULL DEFAULT '' CHECK (length(path_glob) <= 200),
    status            text        NOT NULL CHECK (status IN ('proposed', 'active', 'inactive')),
    -- provenance: the pull request, thread (its first comment), finding,
    -- the writer whose feedback it came from, and the answer run
    pr_number         int         CHECK (pr_number > 0),
    thread_comment_id bigint,
    fingerprint       text        NOT NULL DEFAULT '',
    author            text        NOT NULL,
    run_id            uuid        REFERENCES review_runs (id) ON DELETE SET NULL,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    updated_by        text        NOT NULL DEFAULT ''
);
CREATE INDEX learnings_repository_idx ON learnings (lower(repository), status);
CREATE INDEX learnings_thread_idx ON learnings (repository, pr_number, thread_comment_id) WHERE thread_comment_id IS NOT NULL;
