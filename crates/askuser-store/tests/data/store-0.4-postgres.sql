-- A PostgreSQL store written by askuser-store 0.4 (commit f09759d, migrations 0001-0012), dumped with
-- pg_dump --schema=askuser_upgrade_fixture --no-owner --no-privileges --inserts (comments, blank lines and
-- psql meta-commands removed). tests/it/upgrade.rs restores it under another schema name and opens it.
SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;
CREATE SCHEMA askuser_upgrade_fixture;
CREATE FUNCTION askuser_upgrade_fixture.askuser_pending_notify() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM pg_notify('askuser_pending', NEW.id);
    RETURN NULL;
END
$$;
CREATE FUNCTION askuser_upgrade_fixture.askuser_pending_sequence() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    NEW.change_seq := nextval(format('%I.askuser_change_seq', TG_TABLE_SCHEMA));
    RETURN NEW;
END
$$;
CREATE SEQUENCE askuser_upgrade_fixture.askuser_change_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;
SET default_tablespace = '';
SET default_table_access_method = heap;
CREATE TABLE askuser_upgrade_fixture.askuser_channel_posts (
    channel text NOT NULL,
    question_id text NOT NULL,
    message text NOT NULL
);
CREATE TABLE askuser_upgrade_fixture.askuser_channels (
    channel text NOT NULL,
    holder text NOT NULL,
    held_until bigint NOT NULL,
    cursor text
);
CREATE TABLE askuser_upgrade_fixture.askuser_migrations (
    version bigint NOT NULL,
    description text NOT NULL,
    installed_on timestamp with time zone DEFAULT now() NOT NULL,
    success boolean NOT NULL,
    checksum bytea NOT NULL,
    execution_time bigint NOT NULL
);
CREATE TABLE askuser_upgrade_fixture.askuser_pending (
    id text NOT NULL,
    session_id text,
    tool_name text NOT NULL,
    profile text NOT NULL,
    request text NOT NULL,
    state text NOT NULL,
    asked_at bigint NOT NULL,
    nudge_at bigint NOT NULL,
    expires_at bigint NOT NULL,
    closed_at bigint,
    answered_by text,
    response text,
    version bigint DEFAULT 1 NOT NULL,
    change_seq bigint,
    lease_until bigint,
    asked_by text,
    notices bigint DEFAULT 0 NOT NULL,
    CONSTRAINT askuser_pending_state_check CHECK ((state = ANY (ARRAY['pending'::text, 'answered'::text, 'declined'::text, 'timed_out'::text, 'cancelled'::text])))
);
CREATE TABLE askuser_upgrade_fixture.askuser_revoked_logins (
    session text NOT NULL,
    expires_at bigint NOT NULL
);
INSERT INTO askuser_upgrade_fixture.askuser_channel_posts VALUES ('telegram', 'upgrade-pending', '{"chat":1,"message":10}');
INSERT INTO askuser_upgrade_fixture.askuser_channel_posts VALUES ('slack', 'upgrade-answered', '{"ts":"1.2"}');
INSERT INTO askuser_upgrade_fixture.askuser_channels VALUES ('telegram', 'replica-a', 2112030016702, '12345');
INSERT INTO askuser_upgrade_fixture.askuser_channels VALUES ('-healthz-write-probe', '', 0, '1');
INSERT INTO askuser_upgrade_fixture.askuser_migrations VALUES (1, 'pending', '2026-12-07 19:00:16.43619+00', true, '\xf76d0d94305338891c3f06b65464314be42bb5e8c5520ac9fa4a431537d3d28426225976a05c4de465bb923ea6a6684a', 32832278);
INSERT INTO askuser_upgrade_fixture.askuser_migrations VALUES (2, 'changes', '2026-12-07 19:00:16.474046+00', true, '\x941c7121883115f6fc6b5c9edad818f4aff45cac5d8d4e8e499906ecdab142ade5c48cf34ba77c2659fb63bdab344abb', 19924103);
INSERT INTO askuser_upgrade_fixture.askuser_migrations VALUES (7, 'logins', '2026-12-07 19:00:16.498085+00', true, '\xa78ee33b21baf410ba4c2474ed9d53fa6f85c80c50466cb4503714d347cc03acb43a3ea2bffa6d8a3cc9b6ef723ffcc4', 9999812);
INSERT INTO askuser_upgrade_fixture.askuser_migrations VALUES (8, 'leases', '2026-12-07 19:00:16.51408+00', true, '\xa98f971672358e4ab7a6564ad5481acbf53886cdd939349c6e1bc43a58fea05129372821c539fb4ec9f952e89b3f51c0', 6414619);
INSERT INTO askuser_upgrade_fixture.askuser_migrations VALUES (11, 'asked by', '2026-12-07 19:00:16.525938+00', true, '\x99fe3e7adff71e335d7778eac8b953fcd6829ecef2a87831a469eb2810aa95b09e5dba9e1c93f9ad0b098b0eb2e56eb6', 3946648);
INSERT INTO askuser_upgrade_fixture.askuser_migrations VALUES (12, 'channels', '2026-12-07 19:00:16.533992+00', true, '\xb7cacc557ff9655560a06b797ccc5f5d278698e1e9b8ba833c21258a5887f247dc5d886670f80344840ef7c263f604e8', 15963024);
INSERT INTO askuser_upgrade_fixture.askuser_pending VALUES ('upgrade-pending', 's1', 'ask_user_question', 'reference', '{"id":"upgrade-pending","asked_at":"2026-12-07T19:00:16.658Z","nudge_at":"2036-12-04T18:59:16.658Z","expires_at":"2036-12-04T19:00:16.658Z","questions":[{"header":"Plan","question":"Which plan?","options":[{"label":"Small","description":null},{"label":"Large","description":null}],"multi_select":false},{"header":"Targets","question":"Which files?","options":[{"label":"api.py","description":null},{"label":"db.py","description":null},{"label":"ui.py","description":null}],"multi_select":true}]}', 'pending', 1796670016658, 2112029956658, 2112030016658, NULL, NULL, NULL, 1, 1, NULL, NULL, 1);
INSERT INTO askuser_upgrade_fixture.askuser_pending VALUES ('upgrade-answered', 's1', 'ask_user_question', 'reference', '{"id":"upgrade-answered","asked_at":"2026-12-07T19:00:16.666Z","nudge_at":"2036-12-04T18:59:16.666Z","expires_at":"2036-12-04T19:00:16.666Z","questions":[{"header":"Plan","question":"Which plan?","options":[{"label":"Small","description":null},{"label":"Large","description":null}],"multi_select":false},{"header":"Targets","question":"Which files?","options":[{"label":"api.py","description":null},{"label":"db.py","description":null},{"label":"ui.py","description":null}],"multi_select":true}]}', 'answered', 1796670016666, 2112029956666, 2112030016666, 1796670016676, 'user', '{"answers":[{"header":"Plan","selected":["Large"],"custom_answer":null},{"header":"Targets","selected":[],"custom_answer":"only the 中文 docs\nand tests"}],"cancelled":false,"answered_by":"user"}', 2, 3, NULL, NULL, 13);
INSERT INTO askuser_upgrade_fixture.askuser_revoked_logins VALUES ('login-session-1', 4102444800000);
SELECT pg_catalog.setval('askuser_upgrade_fixture.askuser_change_seq', 3, true);
ALTER TABLE ONLY askuser_upgrade_fixture.askuser_channel_posts
    ADD CONSTRAINT askuser_channel_posts_pkey PRIMARY KEY (channel, question_id);
ALTER TABLE ONLY askuser_upgrade_fixture.askuser_channels
    ADD CONSTRAINT askuser_channels_pkey PRIMARY KEY (channel);
ALTER TABLE ONLY askuser_upgrade_fixture.askuser_migrations
    ADD CONSTRAINT askuser_migrations_pkey PRIMARY KEY (version);
ALTER TABLE ONLY askuser_upgrade_fixture.askuser_pending
    ADD CONSTRAINT askuser_pending_pkey PRIMARY KEY (id);
ALTER TABLE ONLY askuser_upgrade_fixture.askuser_revoked_logins
    ADD CONSTRAINT askuser_revoked_logins_pkey PRIMARY KEY (session);
CREATE INDEX askuser_pending_asked ON askuser_upgrade_fixture.askuser_pending USING btree (asked_at, id);
CREATE INDEX askuser_pending_change ON askuser_upgrade_fixture.askuser_pending USING btree (change_seq);
CREATE INDEX askuser_pending_closed ON askuser_upgrade_fixture.askuser_pending USING btree (closed_at) WHERE (state <> 'pending'::text);
CREATE INDEX askuser_pending_due ON askuser_upgrade_fixture.askuser_pending USING btree (expires_at) WHERE (state = 'pending'::text);
CREATE INDEX askuser_pending_lease ON askuser_upgrade_fixture.askuser_pending USING btree (lease_until) WHERE ((state = 'pending'::text) AND (lease_until IS NOT NULL));
CREATE INDEX askuser_pending_session ON askuser_upgrade_fixture.askuser_pending USING btree (session_id, asked_at, id);
CREATE INDEX askuser_pending_session_state ON askuser_upgrade_fixture.askuser_pending USING btree (session_id, state, asked_at, id);
CREATE INDEX askuser_pending_state ON askuser_upgrade_fixture.askuser_pending USING btree (state, asked_at, id);
CREATE TRIGGER askuser_pending_asked AFTER INSERT ON askuser_upgrade_fixture.askuser_pending FOR EACH ROW EXECUTE FUNCTION askuser_upgrade_fixture.askuser_pending_notify();
CREATE TRIGGER askuser_pending_asked_seq BEFORE INSERT ON askuser_upgrade_fixture.askuser_pending FOR EACH ROW EXECUTE FUNCTION askuser_upgrade_fixture.askuser_pending_sequence();
CREATE TRIGGER askuser_pending_changed AFTER UPDATE OF state ON askuser_upgrade_fixture.askuser_pending FOR EACH ROW WHEN ((old.state IS DISTINCT FROM new.state)) EXECUTE FUNCTION askuser_upgrade_fixture.askuser_pending_notify();
CREATE TRIGGER askuser_pending_changed_seq BEFORE UPDATE OF state ON askuser_upgrade_fixture.askuser_pending FOR EACH ROW WHEN ((old.state IS DISTINCT FROM new.state)) EXECUTE FUNCTION askuser_upgrade_fixture.askuser_pending_sequence();
