-- Ending a sale that has not started (docs/API.md "Stopping a sale"): the
-- end moves both starts_at and ends_at to the moment of the end, an empty
-- window that reads "ended" to every reload (a preload, a reconcile, the
-- books sweep) as any past window does. The window's check allows it;
-- creating an activity still needs ends_at after starts_at (the API checks).

-- +goose Up
ALTER TABLE activities DROP CONSTRAINT chk_activities_window,
    ADD CONSTRAINT chk_activities_window CHECK (ends_at >= starts_at);

-- +goose Down
ALTER TABLE activities DROP CONSTRAINT chk_activities_window,
    ADD CONSTRAINT chk_activities_window CHECK (ends_at > starts_at);
