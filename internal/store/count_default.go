//go:build !toolhost_count

package store

import "database/sql"

// openPool opens a pool of the driver's connections to dsn. Builds with
// the toolhost_count tag open it through a connector that records every
// statement instead (count_testing.go); this one is the plain driver, so
// production pays nothing for the counting.
func openPool(dsn, _ string) (*sql.DB, error) {
	return sql.Open("sqlite", dsn)
}
