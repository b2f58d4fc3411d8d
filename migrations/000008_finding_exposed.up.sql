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
