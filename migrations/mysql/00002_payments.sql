-- Payments and expiry (docs/API.md "Payments and expiry"). An order is a
-- reservation until paid: `pay_by` is when it expires unpaid (NULL while
-- payments are off), `paid_at` the provider's time of payment.
-- `status_fence` is the fence of the per-order lock grant that last changed
-- the status: a status write is refused unless its grant is newer, as an
-- order write is refused unless its activity grant is (00001).
-- `queue_claim_until` is the delay queue's claim: the queue is these rows
-- themselves (index on status, pay_by), claimed with SELECT ... FOR UPDATE
-- SKIP LOCKED, and a claim lapses by itself if its instance dies.

-- +goose Up
ALTER TABLE orders
    ADD COLUMN pay_by            DATETIME(6) NULL,
    ADD COLUMN paid_at           DATETIME(6) NULL,
    ADD COLUMN status_fence      BIGINT      NOT NULL DEFAULT 0,
    ADD COLUMN queue_claim_until DATETIME(6) NULL,
    ADD CONSTRAINT chk_orders_status CHECK (status IN ('created', 'paid', 'expired', 'refund_required')),
    ADD INDEX idx_orders_status_pay_by (status, pay_by);

-- +goose Down
ALTER TABLE orders
    DROP INDEX idx_orders_status_pay_by,
    DROP CONSTRAINT chk_orders_status,
    DROP COLUMN queue_claim_until,
    DROP COLUMN status_fence,
    DROP COLUMN paid_at,
    DROP COLUMN pay_by;
