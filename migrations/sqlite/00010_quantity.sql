-- The SQLite twin of mysql/00010_quantity.sql.

-- +goose Up
ALTER TABLE activities ADD COLUMN per_user_limit INTEGER NOT NULL DEFAULT 1 CHECK (per_user_limit BETWEEN 1 AND 100);
ALTER TABLE orders ADD COLUMN quantity INTEGER NOT NULL DEFAULT 1 CHECK (quantity BETWEEN 1 AND 100);

-- +goose Down
ALTER TABLE orders DROP COLUMN quantity;
ALTER TABLE activities DROP COLUMN per_user_limit;
