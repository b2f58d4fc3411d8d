-- What MergeGuard learned of how the servers of models without a known
-- tokenizer count prompt tokens (review/budget, Correction): per model, the
-- largest ratio seen of the server's usage.prompt_tokens to o200k_base's
-- count of the same request, and how many prompts taught it. Every replica
-- loads it at start and raises it after its calls; the ratio never falls.
CREATE TABLE model_token_corrections (
    model      text             PRIMARY KEY CHECK (model <> ''),
    ratio      double precision NOT NULL CHECK (ratio > 0),
    samples    bigint           NOT NULL CHECK (samples > 0),
    updated_at timestamptz      NOT NULL DEFAULT now()
);
