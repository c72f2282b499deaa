-- Who asks (askuser-store 0.3): `asked_by` is the label a person sees beside a question ("claude-code
-- 1.2 in ~/src/app", a session's name), stored with it so that every replica and process shows the
-- same one; NULL when the asker gave none. `notices` marks the notices already sent about the row
-- (bits: 1 asked, 2 reminder, 4 settled), set by one conditional UPDATE each, so that of several
-- servers following the store exactly one sends each notice. Neither changes `change_seq`
-- (its triggers fire on `state` only).
ALTER TABLE askuser_pending ADD COLUMN asked_by TEXT;
ALTER TABLE askuser_pending ADD COLUMN notices BIGINT NOT NULL DEFAULT 0;
