-- The token corrections of models without a known tokenizer are learned for
-- the ASCII and the non-ASCII parts of a prompt apart (review/budget,
-- Correction): ratio and samples are now the ASCII part's (a ratio learned
-- before on whole prompts is at least the ASCII part's, so it is kept), and
-- other_ratio and other_samples the non-ASCII part's. A prompt teaches one
-- part only, so either part may have no ratio or no sample yet. The ratios
-- never fall.
ALTER TABLE model_token_corrections
    DROP CONSTRAINT model_token_corrections_ratio_check,
    DROP CONSTRAINT model_token_corrections_samples_check,
    ADD CONSTRAINT model_token_corrections_ratio_check CHECK (ratio >= 0),
    ADD CONSTRAINT model_token_corrections_samples_check CHECK (samples >= 0),
    ADD COLUMN other_ratio double precision NOT NULL DEFAULT 0 CHECK (other_ratio >= 0),
    ADD COLUMN other_samples bigint NOT NULL DEFAULT 0 CHECK (other_samples >= 0);
