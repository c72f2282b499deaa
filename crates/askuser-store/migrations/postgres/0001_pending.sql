-- Pending ask_user_question calls (askuser-store, PostgreSQL). Times are milliseconds since the
-- Unix epoch, UTC. A row leaves 'pending' at most once; `version` counts its changes.
CREATE TABLE askuser_pending (
    id          TEXT PRIMARY KEY,
    session_id  TEXT,
    tool_name   TEXT NOT NULL,
    profile     TEXT NOT NULL,
    -- The validated request as JSON text: {"id":…,"questions":[…]} (text, not jsonb: kept byte-exact).
    request     TEXT NOT NULL,
    state       TEXT NOT NULL
        CHECK (state IN ('pending', 'answered', 'declined', 'timed_out', 'cancelled')),
    asked_at    BIGINT NOT NULL,
    nudge_at    BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    -- When the row left 'pending' (the answer time for 'answered' and 'declined').
    closed_at   BIGINT,
    answered_by TEXT,
    -- The committed response as JSON, exactly as checked; secret references only, never values.
    response    TEXT,
    version     BIGINT NOT NULL DEFAULT 1
);

-- The sweep: pending rows by deadline.
CREATE INDEX askuser_pending_due ON askuser_pending (expires_at) WHERE state = 'pending';
-- Listing, oldest asked first, optionally by session.
CREATE INDEX askuser_pending_asked ON askuser_pending (asked_at, id);
CREATE INDEX askuser_pending_session ON askuser_pending (session_id, asked_at, id);

-- Waiters in every process LISTEN on 'askuser_pending'; the payload is the id of a row that left
-- 'pending'. Sent by a trigger, so it is part of the committing transaction whatever the
-- statement, and delivered only if that transaction commits.
CREATE FUNCTION askuser_pending_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('askuser_pending', NEW.id);
    RETURN NULL;
END
$$;

CREATE TRIGGER askuser_pending_closed
    AFTER UPDATE OF state ON askuser_pending
    FOR EACH ROW
    WHEN (OLD.state = 'pending' AND NEW.state <> 'pending')
    EXECUTE FUNCTION askuser_pending_notify();
