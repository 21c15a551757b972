-- Quantity per buyer (docs/API.md "Quantity per buyer"): an activity sells
-- at most `per_user_limit` units to one buyer, in the one order the buyer may
-- hold, and each order keeps the units it holds. `activities.sold` counts
-- units from here on; every order before this migration holds 1, so the
-- counts it holds stay right.

-- +goose Up
ALTER TABLE activities
    ADD COLUMN per_user_limit INT NOT NULL DEFAULT 1,
    ADD CONSTRAINT chk_activities_per_user_limit CHECK (per_user_limit BETWEEN 1 AND 100);
ALTER TABLE orders
    ADD COLUMN quantity INT NOT NULL DEFAULT 1,
    ADD CONSTRAINT chk_orders_quantity CHECK (quantity BETWEEN 1 AND 100);

-- +goose Down
ALTER TABLE orders
    DROP CONSTRAINT chk_orders_quantity,
    DROP COLUMN quantity;
ALTER TABLE activities
    DROP CONSTRAINT chk_activities_per_user_limit,
    DROP COLUMN per_user_limit;
