-- The audit trail (askuser-store 0.5): every event of a question's life as one line of an
-- append-only, hash-chained log (src/audit.rs). `seq` counts from 1 without a gap; `at` is when the
-- event was appended (Unix milliseconds on the store's clock); `line` is the JSON line exported,
-- hash included; `hash` is that hash, the next line's `prev`. Rows are only ever inserted, in the
-- same transaction as the change they record; purging questions leaves them.
CREATE TABLE askuser_audit (
    seq  BIGINT PRIMARY KEY,
    at   BIGINT NOT NULL,
    line TEXT NOT NULL,
    hash TEXT NOT NULL
);
CREATE INDEX askuser_audit_at ON askuser_audit (at);

-- A question that timed out may still take a late answer: the state 'late'.
ALTER TABLE askuser_pending DROP CONSTRAINT askuser_pending_state_check;
ALTER TABLE askuser_pending ADD CONSTRAINT askuser_pending_state_check
    CHECK (state IN ('pending', 'answered', 'declined', 'timed_out', 'cancelled', 'late'));
