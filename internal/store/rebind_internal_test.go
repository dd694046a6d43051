package store

import "testing"

func TestRebind(t *testing.T) {
	for in, want := range map[string]string{
		`SELECT 1`:                                 `SELECT 1`,
		`SELECT a FROM t WHERE b = ? AND c = ?`:    `SELECT a FROM t WHERE b = $1 AND c = $2`,
		`UPDATE t SET a = ?1, b = ?2 WHERE c = ?1`: `UPDATE t SET a = $1, b = $2 WHERE c = $1`,
		`SELECT '?' , "q?" , ? -- why?` + "\n?":    `SELECT '?' , "q?" , $1 -- why?` + "\n$2",
	} {
		if got := rebind(in); got != want {
			t.Errorf("rebind(%q) = %q, want %q", in, got, want)
		}
	}
}
