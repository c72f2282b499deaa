-- Pending ask_user_question calls (askuser-store, SQLite). Times are milliseconds since the Unix
-- epoch, UTC. A row leaves 'pending' at most once; `version` counts its changes.
CREATE TABLE askuser_pending (
    id          TEXT PRIMARY KEY NOT NULL,
    session_id  TEXT,
    tool_name   TEXT NOT NULL,
    profile     TEXT NOT NULL,
    -- The validated request as JSON: {"id":…,"questions":[…]}.
    request     TEXT NOT NULL,
    state       TEXT NOT NULL
        CHECK (state IN ('pending', 'answered', 'declined', 'timed_out', 'cancelled')),
    asked_at    INTEGER NOT NULL,
    nudge_at    INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    -- When the row left 'pending' (the answer time for 'answered' and 'declined').
    closed_at   INTEGER,
    answered_by TEXT,
    -- The committed response as JSON, exactly as checked; secret references only, never values.
    response    TEXT,
    version     INTEGER NOT NULL DEFAULT 1,
    -- The order in which rows left 'pending', across every process writing this file: other
    -- processes poll it to wake their waiters (SQLite has no notifications between processes).
    change_seq  INTEGER
);

-- The sweep: pending rows by deadline.
CREATE INDEX askuser_pending_due ON askuser_pending (expires_at) WHERE state = 'pending';
-- Listing, oldest asked first, optionally by session.
CREATE INDEX askuser_pending_asked ON askuser_pending (asked_at, id);
CREATE INDEX askuser_pending_session ON askuser_pending (session_id, asked_at, id);
-- The cross-process poll.
-- Not partial: `max(change_seq)` when a row closes must use it too (a partial index would not
-- serve that query, and every close would scan the table).
CREATE INDEX askuser_pending_change ON askuser_pending (change_seq);
