DROP TABLE IF EXISTS web_sessions;
DROP TABLE IF EXISTS access_secrets;
