-- Dismissals by the API count as commands in the older schema.
UPDATE pr_findings SET state_how = 'command' WHERE state = 'dismissed' AND state_how = 'api';
ALTER TABLE pr_findings
    DROP CONSTRAINT pr_findings_dismissed_how,
    ADD CONSTRAINT pr_findings_dismissed_how
        CHECK (state <> 'dismissed' OR state_how IN ('thread_resolved', 'command', 'feedback'));
