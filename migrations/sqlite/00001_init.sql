-- The SQLite twin of mysql/00001_init.sql for the embedded mode: same tables,
-- columns, constraints and index names. Times are stored as text in UTC with
-- microsecond precision, written by the application.

-- +goose Up
CREATE TABLE activities (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        VARCHAR(128) NOT NULL CHECK (length(name) <= 128),
    total_stock BIGINT   NOT NULL,
    starts_at   DATETIME NOT NULL,
    ends_at     DATETIME NOT NULL,
    created_at  DATETIME NOT NULL,
    fence       BIGINT   NOT NULL DEFAULT 0,
    sold        BIGINT   NOT NULL DEFAULT 0,
    CONSTRAINT chk_activities_total_stock CHECK (total_stock >= 0),
    CONSTRAINT chk_activities_sold CHECK (sold >= 0 AND sold <= total_stock),
    CONSTRAINT chk_activities_window CHECK (ends_at > starts_at)
);

CREATE TABLE orders (
    id              VARCHAR(36) NOT NULL PRIMARY KEY,
    activity_id     BIGINT      NOT NULL REFERENCES activities (id),
    user_id         BIGINT      NOT NULL,
    status          VARCHAR(16) NOT NULL,
    idempotency_key VARCHAR(64) NULL CHECK (length(idempotency_key) <= 64),
    fence           BIGINT      NOT NULL,
    created_at      DATETIME    NOT NULL
);
CREATE UNIQUE INDEX uq_orders_activity_user ON orders (activity_id, user_id);
CREATE UNIQUE INDEX uq_orders_user_idempotency_key ON orders (user_id, idempotency_key);

-- +goose Down
DROP TABLE orders;
DROP TABLE activities;
