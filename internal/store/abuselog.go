package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
)

// The abuse log's rows (package abuse, docs/abuse.md): the statements of
// one concern, for both dialects. Package abuse holds them as its
// abuse.Rows interface; *Store implements it.

// AbuseCount is a pending row of the abuse log: the events of one key in
// one bucket, to be added to the stored row of that key and bucket or
// inserted as a new one. Times are UTC RFC 3339 text with milliseconds.
type AbuseCount struct {
	Bucket string
	// Caller is the pseudonym; "" with HasCaller false for no address
	// (stored as NULL).
	Caller    string
	HasCaller bool
	Principal string
	Tool      string
	Reason    string
	Reported  bool
	// First and Last are the times of the first and last events,
	// FirstRequestID and LastRequestID their request ids.
	First, Last                   string
	FirstRequestID, LastRequestID string
	Count                         int64
}

// AbuseRecord is a stored row of the abuse log, as AbuseRows returns it.
type AbuseRecord struct {
	ID                            int64
	At, LastAt                    string // LastAt is At for a single event
	Count                         int64
	Caller                        string // "" for none
	Principal, Tool, Reason       string
	Reported                      bool
	FirstRequestID, LastRequestID string
}

// AddAbuseCounts adds each count to its stored row, or inserts it, in one
// transaction. The stored row keeps its first event; its last becomes the
// later of the two.
func (s *Store) AddAbuseCounts(ctx context.Context, counts []AbuseCount) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit; before it, the failure is the one returned
	// SET's right-hand sides all read the row as it was. CASE rather than
	// SQLite's two-argument max, IS NOT DISTINCT FROM for a caller that
	// may be NULL: one text for both dialects.
	update, err := tx.PrepareContext(ctx, `UPDATE abuse_log SET count = count + ?1,
		last_at = CASE WHEN ?2 > coalesce(last_at, at) THEN ?2 ELSE coalesce(last_at, at) END,
		last_request_id = CASE WHEN ?2 >= coalesce(last_at, at) THEN ?3 ELSE last_request_id END
		WHERE bucket = ?4 AND caller IS NOT DISTINCT FROM ?5 AND principal = ?6 AND tool = ?7 AND reason = ?8 AND reported = ?9`)
	if err != nil {
		return err
	}
	insert, err := tx.PrepareContext(ctx, `INSERT INTO abuse_log (at, last_at, bucket, count, caller, principal, tool, reason, reported,
		first_request_id, last_request_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	for _, c := range counts {
		caller := sql.NullString{String: c.Caller, Valid: c.HasCaller}
		res, err := update.ExecContext(ctx, c.Count, c.Last, c.LastRequestID, c.Bucket, caller, c.Principal, c.Tool, c.Reason, c.Reported)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n > 0 {
			continue
		}
		if _, err := insert.ExecContext(ctx, c.First, c.Last, c.Bucket, c.Count, caller, c.Principal, c.Tool, c.Reason, c.Reported,
			c.FirstRequestID, c.LastRequestID); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// PurgeAbuseLog deletes the rows whose last event is before before and
// returns how many.
func (s *Store) PurgeAbuseLog(ctx context.Context, before string) (int64, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM abuse_log WHERE coalesce(last_at, at) < ?`, before)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// ListAbuseLog returns the rows whose first event is at or after since,
// oldest first, at most limit of them (all when limit <= 0).
func (s *Store) ListAbuseLog(ctx context.Context, since string, limit int) ([]AbuseRecord, error) {
	if limit <= 0 {
		limit = math.MaxInt64 // no limit, in both dialects (not SQLite's -1)
	}
	rows, err := s.read.QueryContext(ctx,
		`SELECT id, at, coalesce(last_at, at), count, coalesce(caller, ''), principal, tool, reason, reported,
		        first_request_id, last_request_id
		   FROM abuse_log WHERE at >= ? ORDER BY at, id LIMIT ?`, since, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close() //nolint:errcheck // rows.Err, returned below, has the iteration's failure
	var out []AbuseRecord
	for rows.Next() {
		var r AbuseRecord
		if err := rows.Scan(&r.ID, &r.At, &r.LastAt, &r.Count, &r.Caller, &r.Principal, &r.Tool, &r.Reason, &r.Reported,
			&r.FirstRequestID, &r.LastRequestID); err != nil {
			return nil, fmt.Errorf("row: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
