-- Activities and their orders. `sold` and `fence` make the database the last
-- guard against overselling: an order is written only by a transaction that
-- moves `sold` below `total_stock` and `fence` forward (see internal/order).
-- Idempotency keys and order ids compare byte for byte (utf8mb4_bin): keys
-- that differ only in case are different keys.

-- +goose Up
CREATE TABLE activities (
    id          BIGINT       NOT NULL AUTO_INCREMENT,
    name        VARCHAR(128) NOT NULL,
    total_stock BIGINT       NOT NULL,
    starts_at   DATETIME(6)  NOT NULL,
    ends_at     DATETIME(6)  NOT NULL,
    created_at  DATETIME(6)  NOT NULL,
    fence       BIGINT       NOT NULL DEFAULT 0,
    sold        BIGINT       NOT NULL DEFAULT 0,
    PRIMARY KEY (id),
    CONSTRAINT chk_activities_total_stock CHECK (total_stock >= 0),
    CONSTRAINT chk_activities_sold CHECK (sold >= 0 AND sold <= total_stock),
    CONSTRAINT chk_activities_window CHECK (ends_at > starts_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

CREATE TABLE orders (
    id              VARCHAR(36) COLLATE utf8mb4_bin NOT NULL,
    activity_id     BIGINT      NOT NULL,
    user_id         BIGINT      NOT NULL,
    status          VARCHAR(16) NOT NULL,
    idempotency_key VARCHAR(64) COLLATE utf8mb4_bin NULL,
    fence           BIGINT      NOT NULL,
    created_at      DATETIME(6) NOT NULL,
    PRIMARY KEY (id),
    UNIQUE KEY uq_orders_activity_user (activity_id, user_id),
    UNIQUE KEY uq_orders_user_idempotency_key (user_id, idempotency_key),
    CONSTRAINT fk_orders_activity FOREIGN KEY (activity_id) REFERENCES activities (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

-- +goose Down
DROP TABLE orders;
DROP TABLE activities;
