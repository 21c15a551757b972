-- The SQLite twin of mysql/00008_pause.sql.

-- +goose Up
ALTER TABLE activities ADD COLUMN paused_at DATETIME NULL;

-- +goose Down
ALTER TABLE activities DROP COLUMN paused_at;
