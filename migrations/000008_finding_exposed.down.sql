DROP TABLE gate_refreshes;
DROP FUNCTION gate_refreshes_notify();

-- Back to four states: an exposed secret becomes open again (it blocks, as
-- an exposed one did under the default secrets.removed: block).
UPDATE pr_findings SET state = 'open', state_how = '' WHERE state = 'exposed';
ALTER TABLE pr_findings
    DROP CONSTRAINT pr_findings_exposed_how,
    DROP CONSTRAINT pr_findings_state_check,
    ADD CONSTRAINT pr_findings_state_check CHECK (state IN ('open', 'fixed', 'dismissed', 'outdated'));
