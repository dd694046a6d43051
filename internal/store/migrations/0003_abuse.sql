-- The pseudonymous abuse log (package abuse): refused and throttled runs,
-- and runs that trip an abuse rule. See docs/abuse.md.
--
-- No raw IP address is stored here. caller is the lower-case hex
-- HMAC-SHA256 of the normalised client address keyed with a salt that
-- lives in memory for one UTC day only; NULL when the request had no
-- client address. Rows older than the retention (30 days) are purged.
-- Dropping this table removes the log completely.
--
-- Timestamps are UTC text in RFC 3339 with milliseconds, as in 0001.
CREATE TABLE abuse_log (
    id        INTEGER PRIMARY KEY,
    at        TEXT    NOT NULL,
    caller    TEXT    CHECK (caller IS NULL OR length(caller) = 64),
    -- The principal or user subject when there is one, else ''.
    principal TEXT    NOT NULL DEFAULT '',
    tool      TEXT    NOT NULL DEFAULT '',
    -- A stable reason code, e.g. "quota.exceeded".
    reason    TEXT    NOT NULL,
    -- 1 when the guard was in report mode and let the run through.
    reported  INTEGER NOT NULL DEFAULT 0 CHECK (reported IN (0, 1))
);

CREATE INDEX abuse_log_at ON abuse_log (at);
