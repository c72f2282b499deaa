-- The audit trail (askuser-store 0.5): every event of a question's life as one line of an
-- append-only, hash-chained log (src/audit.rs). `seq` counts from 1 without a gap; `at` is when the
-- event was appended (Unix milliseconds on the store's clock); `line` is the JSON line exported,
-- hash included; `hash` is that hash, the next line's `prev`. Rows are only ever inserted, in the
-- same transaction as the change they record; purging questions leaves them.
CREATE TABLE askuser_audit (
    seq  INTEGER PRIMARY KEY,
    at   INTEGER NOT NULL,
    line TEXT NOT NULL,
    hash TEXT NOT NULL
);
CREATE INDEX askuser_audit_at ON askuser_audit (at);

-- A question that timed out may still take a late answer: the state 'late'. SQLite cannot change a
-- CHECK constraint, so the table is rebuilt (https://www.sqlite.org/lang_altertable.html, "Making
-- Other Kinds Of Table Schema Changes"), every row, index and trigger kept.
DROP TRIGGER askuser_coordination_goes_with_its_question;
CREATE TABLE askuser_pending_next (
    id          TEXT PRIMARY KEY NOT NULL,
    session_id  TEXT,
    tool_name   TEXT NOT NULL,
    profile     TEXT NOT NULL,
    -- The validated request as JSON: {"id":…,"questions":[…]}.
    request     TEXT NOT NULL,
    state       TEXT NOT NULL
        CHECK (state IN ('pending', 'answered', 'declined', 'timed_out', 'cancelled', 'late')),
    asked_at    INTEGER NOT NULL,
    nudge_at    INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    -- When the row left 'pending' (the answer time for 'answered' and 'declined'; for 'late',
    -- when the late answer came).
    closed_at   INTEGER,
    answered_by TEXT,
    -- The committed response as JSON, exactly as checked; secret references only, never values.
    response    TEXT,
    version     INTEGER NOT NULL DEFAULT 1,
    -- The order in which rows changed, across every process writing this file: other processes
    -- poll it to wake their waiters (SQLite has no notifications between processes).
    change_seq  INTEGER,
    lease_until INTEGER,
    asked_by    TEXT
);
INSERT INTO askuser_pending_next (id, session_id, tool_name, profile, request, state, asked_at, nudge_at,
        expires_at, closed_at, answered_by, response, version, change_seq, lease_until, asked_by)
    SELECT id, session_id, tool_name, profile, request, state, asked_at, nudge_at, expires_at, closed_at,
        answered_by, response, version, change_seq, lease_until, asked_by FROM askuser_pending;
DROP TABLE askuser_pending;
ALTER TABLE askuser_pending_next RENAME TO askuser_pending;
CREATE INDEX askuser_pending_due ON askuser_pending (expires_at) WHERE state = 'pending';
CREATE INDEX askuser_pending_asked ON askuser_pending (asked_at, id);
CREATE INDEX askuser_pending_session ON askuser_pending (session_id, asked_at, id);
CREATE INDEX askuser_pending_change ON askuser_pending (change_seq);
CREATE INDEX askuser_pending_state ON askuser_pending (state, asked_at, id);
CREATE INDEX askuser_pending_session_state ON askuser_pending (session_id, state, asked_at, id);
CREATE INDEX askuser_pending_closed ON askuser_pending (closed_at) WHERE state <> 'pending';
CREATE INDEX askuser_pending_lease ON askuser_pending (lease_until)
    WHERE state = 'pending' AND lease_until IS NOT NULL;
CREATE TRIGGER askuser_coordination_goes_with_its_question AFTER DELETE ON askuser_pending
BEGIN
    DELETE FROM askuser_coordination WHERE question_id = old.id;
END;
