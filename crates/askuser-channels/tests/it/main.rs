//! askuser-channels' integration tests: the real channel code against local doubles of the
//! Telegram Bot API and of Slack's Web API and Socket Mode.

mod config;
mod fleet;
mod race;
mod slack;
mod slack_double;
mod support;
mod telegram;
mod telegram_double;
