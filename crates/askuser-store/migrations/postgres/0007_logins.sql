-- Login sessions that were logged out (askuser-server's login cookies name their session), kept
-- until the cookie would have expired anyway, so that a logout holds on every replica sharing the
-- store and across restarts. `expires_at` is Unix milliseconds.
CREATE TABLE askuser_revoked_logins (
    session TEXT PRIMARY KEY,
    expires_at BIGINT NOT NULL
);
