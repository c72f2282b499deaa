-- The store's change feed (askuser-store 0.2). Every change to a record, a question asked as well
-- as one leaving 'pending', takes the next `change_seq` (SQLite runs one writer at a time, so the
-- numbers commit in order); every process reads the rows past the last number it saw.
-- Rows asked before this migration keep a NULL `change_seq` until they change.

-- Listing newest first, filtered by state and session, and retention's purge of settled rows.
CREATE INDEX askuser_pending_state ON askuser_pending (state, asked_at, id);
CREATE INDEX askuser_pending_session_state ON askuser_pending (session_id, state, asked_at, id);
CREATE INDEX askuser_pending_closed ON askuser_pending (closed_at) WHERE state <> 'pending';
