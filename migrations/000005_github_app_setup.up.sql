-- The one-click GitHub App creation (/setup, the manifest flow).
--
-- setup_states: a flow started in a browser, finished by GitHub's redirect
-- to /setup/callback on any replica. Only SHA-256 hashes are kept: of the
-- state sent to GitHub, and of the nonce in the starting browser's cookie.
-- A state is used once (the callback deletes it) and expires.
CREATE TABLE setup_states (
    state_hash   bytea       PRIMARY KEY CHECK (length(state_hash) = 32),
    browser_hash bytea       NOT NULL CHECK (length(browser_hash) = 32),
    -- the GitHub (web address) the manifest was sent to: the code is
    -- exchanged with its API
    web_url      text        NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL
);
CREATE INDEX setup_states_expires_idx ON setup_states (expires_at);

-- github_app: the GitHub App the flow created (at most one). The private
-- key, webhook secret and OAuth client secret are in secrets, sealed with
-- AES-256-GCM under MERGEGUARD_SECRET_KEY (never in clear); the rest is
-- public. version grows with every change so replicas notice one cheaply.
CREATE TABLE github_app (
    singleton  boolean     PRIMARY KEY DEFAULT true CHECK (singleton),
    app_id     bigint      NOT NULL CHECK (app_id > 0),
    slug       text        NOT NULL,
    html_url   text        NOT NULL,
    client_id  text        NOT NULL DEFAULT '',
    secrets    bytea       NOT NULL,
    version    bigint      NOT NULL DEFAULT 1,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
