DROP TABLE model_token_corrections;
