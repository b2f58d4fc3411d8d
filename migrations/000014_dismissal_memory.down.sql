DROP INDEX pr_findings_dismissed_idx;
DROP TABLE finding_revivals;
DROP TABLE suppressed_findings;
