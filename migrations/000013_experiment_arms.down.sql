ALTER TABLE pr_findings DROP COLUMN outcome_arm;
ALTER TABLE review_runs
    DROP COLUMN arm,
    DROP COLUMN prompt_version;
