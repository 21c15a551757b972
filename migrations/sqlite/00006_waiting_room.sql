-- The SQLite twin of mysql/00006_waiting_room.sql.

-- +goose Up
ALTER TABLE activities ADD COLUMN waiting_room_opens_at DATETIME NULL;
ALTER TABLE activities ADD COLUMN waiting_room_seed CHAR(32) NULL;
ALTER TABLE activities ADD COLUMN announced BOOLEAN NOT NULL DEFAULT TRUE;

-- +goose Down
ALTER TABLE activities DROP COLUMN announced;
ALTER TABLE activities DROP COLUMN waiting_room_seed;
ALTER TABLE activities DROP COLUMN waiting_room_opens_at;
