DROP TABLE github_app;
DROP TABLE setup_states;
