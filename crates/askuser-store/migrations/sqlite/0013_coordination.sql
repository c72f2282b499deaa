-- Coordination apart from questions (askuser-store 0.5). One table of namespaced keys holds what the
-- processes sharing a store agree on besides questions: leases (namespace 'lease': who holds a
-- name, `value` the holder, until `expires_at`), keys claimed once (a notice sent once) and small
-- values (a chat channel's cursor and posted messages, revoked logins). A row may go with a
-- question (`question_id`): it is deleted when the question is purged. `expires_at` (Unix
-- milliseconds on the store's clock, NULL: never) is when a row lapses and reads as absent.
CREATE TABLE askuser_coordination (
    namespace   TEXT NOT NULL,
    key         TEXT NOT NULL,
    value       TEXT NOT NULL,
    question_id TEXT,
    expires_at  INTEGER,
    PRIMARY KEY (namespace, key)
);
CREATE INDEX askuser_coordination_question ON askuser_coordination (question_id)
    WHERE question_id IS NOT NULL;
CREATE TRIGGER askuser_coordination_goes_with_its_question AFTER DELETE ON askuser_pending
BEGIN
    DELETE FROM askuser_coordination WHERE question_id = old.id;
END;

-- What earlier versions kept in tables of their own, moved: notices sent (bits of
-- `askuser_pending.notices`), revoked logins, chat channels' holders and cursors, and their posts.
INSERT INTO askuser_coordination (namespace, key, value, question_id)
    SELECT 'notice.asked', id, '', id FROM askuser_pending WHERE (notices & 1) <> 0;
INSERT INTO askuser_coordination (namespace, key, value, question_id)
    SELECT 'notice.reminder', id, '', id FROM askuser_pending WHERE (notices & 2) <> 0;
INSERT INTO askuser_coordination (namespace, key, value, question_id)
    SELECT 'notice.settled', id, '', id FROM askuser_pending WHERE (notices & 4) <> 0;
INSERT INTO askuser_coordination (namespace, key, value, question_id)
    SELECT 'notice.secrets-taken', id, '', id FROM askuser_pending WHERE (notices & 8) <> 0;
INSERT INTO askuser_coordination (namespace, key, value, expires_at)
    SELECT 'login.revoked', session, '', expires_at FROM askuser_revoked_logins;
INSERT INTO askuser_coordination (namespace, key, value, expires_at)
    SELECT 'lease', 'channel.' || channel, holder, held_until FROM askuser_channels WHERE holder <> '';
INSERT INTO askuser_coordination (namespace, key, value)
    SELECT 'channel.cursor', channel, cursor FROM askuser_channels
    WHERE cursor IS NOT NULL AND channel <> '-healthz-write-probe';
-- A post whose question was purged already keeps no tie (its channel retires it at start).
INSERT INTO askuser_coordination (namespace, key, value, question_id)
    SELECT 'channel.' || channel || '.posts', question_id, message,
        CASE WHEN EXISTS (SELECT 1 FROM askuser_pending WHERE id = question_id) THEN question_id END
    FROM askuser_channel_posts;

DROP TABLE askuser_channel_posts;
DROP TABLE askuser_channels;
DROP TABLE askuser_revoked_logins;
ALTER TABLE askuser_pending DROP COLUMN notices;
