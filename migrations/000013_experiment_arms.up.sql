-- Model comparison on live traffic (llm.experiments; docs/quality.md,
-- Choosing a model): each run records the experiment arm that reviewed
-- ('default' for llm.model) and its reviewer prompt's version, and each
-- finding's outcome the arm of the run that first reported it, copied at
-- the close (as outcome_source) so that it survives the run's deletion.
-- '' is a run or an outcome from before arms were recorded.
-- Additive: columns with constant defaults, no rewrite of existing rows.
ALTER TABLE review_runs
    ADD COLUMN arm            text NOT NULL DEFAULT '',
    ADD COLUMN prompt_version text NOT NULL DEFAULT '';
ALTER TABLE pr_findings
    ADD COLUMN outcome_arm text NOT NULL DEFAULT '';
