-- A secret a later push removed from a pull request's diff was pushed all
-- the same: it stays in the branch's history. Its ledger entry becomes
-- 'exposed' (it keeps blocking until a person dismisses it, or warns under
-- secrets.removed: warn, as state_how says). The constraints are added
-- NOT VALID and validated apart, so the table is not locked for the scan.
ALTER TABLE pr_findings
    DROP CONSTRAINT pr_findings_state_check,
    ADD CONSTRAINT pr_findings_state_check
        CHECK (state IN ('open', 'fixed', 'dismissed', 'outdated', 'exposed')) NOT VALID,
    ADD CONSTRAINT pr_findings_exposed_how
        CHECK (state <> 'exposed' OR state_how IN ('secret_removed', 'secret_removed_warn')) NOT VALID;
ALTER TABLE pr_findings VALIDATE CONSTRAINT pr_findings_state_check;
ALTER TABLE pr_findings VALIDATE CONSTRAINT pr_findings_exposed_how;

-- A person's dismissal (or thread change) refreshes the gate of its pull
-- request at once: the check of the current head completes again from the
-- ledger, and the bot's REQUEST_CHANGES reviews are dismissed when nothing
-- blocks. One row per pull request, queued in the transaction of the
-- change, claimed with a lease by any replica's worker, deleted when done
-- (unless queued again meanwhile).
CREATE TABLE gate_refreshes (
    repository      text        NOT NULL,
    pr_number       int         NOT NULL CHECK (pr_number > 0),
    installation_id bigint      NOT NULL,
    queued_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
    claimed_until   timestamptz NOT NULL DEFAULT '-infinity',
    attempts        int         NOT NULL DEFAULT 0,
    PRIMARY KEY (repository, pr_number)
);
CREATE INDEX gate_refreshes_claim_idx ON gate_refreshes (claimed_until, queued_at);

CREATE FUNCTION gate_refreshes_notify() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('mergeguard_jobs', 'gate');
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER gate_refreshes_queued AFTER INSERT OR UPDATE OF queued_at ON gate_refreshes
    FOR EACH ROW EXECUTE FUNCTION gate_refreshes_notify();
