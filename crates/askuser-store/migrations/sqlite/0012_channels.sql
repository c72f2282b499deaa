-- Chat channels (askuser-channels: Telegram, Slack), askuser-store 0.4. `askuser_channels` holds one
-- row per channel: which server process runs it (`holder`, until `held_until`, Unix milliseconds on
-- the store's clock; of several replicas exactly one holds a channel at a time) and where it is in
-- the service's stream (`cursor`: Telegram's getUpdates offset), so that a restart or another replica
-- resumes there. `askuser_channel_posts` holds the message posted for each question still shown in a
-- channel (`message`: the channel's own JSON: chat and message ids, a multi-select's ticks), deleted
-- once the message is retired; a restart finds it there and does not post again.
CREATE TABLE askuser_channels (
    channel TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    held_until INTEGER NOT NULL,
    cursor TEXT
);
CREATE TABLE askuser_channel_posts (
    channel TEXT NOT NULL,
    question_id TEXT NOT NULL,
    message TEXT NOT NULL,
    PRIMARY KEY (channel, question_id)
);
