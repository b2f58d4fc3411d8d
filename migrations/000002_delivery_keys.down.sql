DROP INDEX IF EXISTS webhook_deliveries_sender_idx;
DROP INDEX IF EXISTS webhook_deliveries_pr_idx;
ALTER TABLE webhook_deliveries
    DROP COLUMN IF EXISTS command,
    DROP COLUMN IF EXISTS sender,
    DROP COLUMN IF EXISTS head_sha,
    DROP COLUMN IF EXISTS pr_number;
