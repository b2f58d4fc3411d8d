DROP TABLE pr_closings;
ALTER TABLE pr_findings
    DROP CONSTRAINT pr_findings_outcome_check,
    DROP COLUMN outcome,
    DROP COLUMN outcome_how,
    DROP COLUMN outcome_source,
    DROP COLUMN outcome_merged,
    DROP COLUMN outcome_at;
