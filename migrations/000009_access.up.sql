-- Access without an anonymous mode (docs/security.md, "Access control").
--
-- access_secrets: what `serve` generates when the configuration names none:
-- the API token (name 'api_token') when MERGEGUARD_API_TOKEN is not set, and
-- the one-time setup code /setup asks for while no GitHub App is stored
-- ('setup_code'). The first replica to start writes it (INSERT ... ON
-- CONFLICT DO NOTHING), every replica and restart reads the same value. It
-- must be readable to be printed in the sign-in link, so it is sealed with
-- MERGEGUARD_SECRET_KEY (AES-256-GCM) when that is set (sealed true) and
-- kept as is otherwise.
CREATE TABLE IF NOT EXISTS access_secrets (
    name       text        PRIMARY KEY CHECK (name IN ('api_token', 'setup_code')),
    value      bytea       NOT NULL,
    sealed     boolean     NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- web_sessions: the web UI's sign-in sessions, so that sign-out and "Sign
-- everyone out" revoke them on every replica. The cookie carries a random
-- session id (inside the sealed cookie); only its SHA-256 is kept. A
-- session is live while its row exists and has not expired.
CREATE TABLE IF NOT EXISTS web_sessions (
    id_hash    bytea       PRIMARY KEY CHECK (length(id_hash) = 32),
    kind       text        NOT NULL CHECK (kind IN ('token', 'github')),
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS web_sessions_expires_idx ON web_sessions (expires_at);
