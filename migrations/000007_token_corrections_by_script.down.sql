-- Back to one ratio per model: the non-ASCII part's is dropped, and so are
-- the models that have no ASCII ratio or sample yet (000006 requires both);
-- what they had learned is learned again from the next prompts.
DELETE FROM model_token_corrections WHERE ratio = 0 OR samples = 0;
ALTER TABLE model_token_corrections
    DROP COLUMN other_ratio,
    DROP COLUMN other_samples,
    DROP CONSTRAINT model_token_corrections_ratio_check,
    DROP CONSTRAINT model_token_corrections_samples_check,
    ADD CONSTRAINT model_token_corrections_ratio_check CHECK (ratio > 0),
    ADD CONSTRAINT model_token_corrections_samples_check CHECK (samples > 0);
