package store

import "io/fs"

// MigrationFiles is the folder of d's migration files, NNNN_name.sql: the
// two sets have the same files, each in its dialect (TestMigrationSets).
func MigrationFiles(d Dialect) fs.FS {
	if d == Postgres {
		sub, _ := fs.Sub(postgresMigrationFiles, "migrations_postgres")
		return sub
	}
	sub, _ := fs.Sub(migrationFiles, "migrations")
	return sub
}
