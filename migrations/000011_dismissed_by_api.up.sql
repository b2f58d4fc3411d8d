-- The API token's holder dismisses a finding through the API (or the web
-- UI): state_how 'api'. Added NOT VALID and validated apart, so the table
-- is not locked for the scan.
ALTER TABLE pr_findings
    DROP CONSTRAINT pr_findings_dismissed_how,
    ADD CONSTRAINT pr_findings_dismissed_how
        CHECK (state <> 'dismissed' OR state_how IN ('thread_resolved', 'command', 'feedback', 'api')) NOT VALID;
ALTER TABLE pr_findings VALIDATE CONSTRAINT pr_findings_dismissed_how;
