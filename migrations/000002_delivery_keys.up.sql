-- What a delivery is about, so that intake can recognise a replayed
-- pull_request event under a new delivery id, and rate-limit comment
-- commands per pull request and per user, in the transaction that records
-- the delivery.
ALTER TABLE webhook_deliveries
    ADD COLUMN pr_number int CHECK (pr_number > 0),
    ADD COLUMN head_sha  text NOT NULL DEFAULT '',
    ADD COLUMN sender    text NOT NULL DEFAULT '',  -- who wrote a comment command
    ADD COLUMN command   text NOT NULL DEFAULT '';  -- the command, '' for other deliveries

-- Replays: the pull_request deliveries of a pull request, newest first.
CREATE INDEX webhook_deliveries_pr_idx ON webhook_deliveries (repository, pr_number, received_at DESC)
    WHERE pr_number IS NOT NULL;
-- Rate limits of a user's commands.
CREATE INDEX webhook_deliveries_sender_idx ON webhook_deliveries (sender, received_at DESC)
    WHERE command <> '';
