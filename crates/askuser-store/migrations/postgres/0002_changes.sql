-- The store's change feed (askuser-store 0.2). Every change to a record, a question asked as well
-- as one leaving 'pending', takes the next number of `askuser_change_seq` in a trigger, so that
-- whatever writes the table (askuser, a host's own SQL) is seen by every process's feed, and a
-- notification on 'askuser_pending' (payload: the row's id) tells listeners to read the rows past
-- the last number they saw. The notification is only a hint: readers trust the table, not it.
-- Rows asked before this migration keep a NULL `change_seq` until they change.
CREATE SEQUENCE askuser_change_seq;
ALTER TABLE askuser_pending ADD COLUMN change_seq BIGINT;
CREATE INDEX askuser_pending_change ON askuser_pending (change_seq);

CREATE FUNCTION askuser_pending_sequence() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.change_seq := nextval(format('%I.askuser_change_seq', TG_TABLE_SCHEMA));
    RETURN NEW;
END
$$;

CREATE TRIGGER askuser_pending_asked_seq
    BEFORE INSERT ON askuser_pending
    FOR EACH ROW EXECUTE FUNCTION askuser_pending_sequence();
CREATE TRIGGER askuser_pending_changed_seq
    BEFORE UPDATE OF state ON askuser_pending
    FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state)
    EXECUTE FUNCTION askuser_pending_sequence();

DROP TRIGGER askuser_pending_closed ON askuser_pending;
CREATE TRIGGER askuser_pending_asked
    AFTER INSERT ON askuser_pending
    FOR EACH ROW EXECUTE FUNCTION askuser_pending_notify();
CREATE TRIGGER askuser_pending_changed
    AFTER UPDATE OF state ON askuser_pending
    FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state)
    EXECUTE FUNCTION askuser_pending_notify();

-- Listing newest first, filtered by state and session, and retention's purge of settled rows.
CREATE INDEX askuser_pending_state ON askuser_pending (state, asked_at, id);
CREATE INDEX askuser_pending_session_state ON askuser_pending (session_id, state, asked_at, id);
CREATE INDEX askuser_pending_closed ON askuser_pending (closed_at) WHERE state <> 'pending';
