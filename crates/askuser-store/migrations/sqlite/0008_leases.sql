-- Leases (askuser-store 0.2): a question asked by a live asker (one that waits for its answer)
-- holds `lease_until`, which the asker's waits renew; once it lapses, the sweep withdraws the
-- question ('cancelled'), so a killed asker's question does not stay answerable until its
-- deadline. NULL: a deferred question, which nobody waits for by design and keeps its deadline.
-- Times are milliseconds since the Unix epoch, UTC.
ALTER TABLE askuser_pending ADD COLUMN lease_until INTEGER;
CREATE INDEX askuser_pending_lease ON askuser_pending (lease_until)
    WHERE state = 'pending' AND lease_until IS NOT NULL;
