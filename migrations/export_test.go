package migrations

// SQLiteGoMigrations exposes the Go migrations to the tests, which apply
// the files step by step.
var SQLiteGoMigrations = sqliteGoMigrations
