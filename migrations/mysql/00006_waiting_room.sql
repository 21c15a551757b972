-- Waiting rooms and unannounced activities (docs/API.md "Waiting room",
-- "Unannounced activities"). An activity with a waiting room has its
-- opening time and the seed of its draw: the pre-queue's random places are
-- fixed by the seed, so keeping it here lets the room be rebuilt after Redis
-- lost it, and lets ops show afterwards that the draw was fair. `announced`
-- false hides an activity from buyers until its start.

-- +goose Up
ALTER TABLE activities
    ADD COLUMN waiting_room_opens_at DATETIME(6) NULL,
    ADD COLUMN waiting_room_seed     CHAR(32)    NULL,
    ADD COLUMN announced             BOOLEAN     NOT NULL DEFAULT TRUE;

-- +goose Down
ALTER TABLE activities
    DROP COLUMN announced,
    DROP COLUMN waiting_room_seed,
    DROP COLUMN waiting_room_opens_at;
