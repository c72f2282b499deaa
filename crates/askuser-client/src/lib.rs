//! A client of the askuser answer server (`askuser serve`), without the server: its wire types
//! ([`wire`]), the API token and the token file ([`ApiToken`]), and (feature `http`, on by
//! default) [`HttpAnswerer`], an `Answerer` that asks through the server and long-polls for the
//! answer, and [`Racing`], which races one of your own answerers (a terminal, an MCP host's form)
//! against the server's surfaces.
//!
//! The server (`askuser-server`) builds on the same types, so a request this crate writes is the
//! one the server reads; this crate builds no HTTP server, template engine or database driver.
//!
//! ```no_run
//! use askuser_client::{ApiToken, HttpAnswerer};
//! use askuser_tool::AskUser;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let token = ApiToken::for_client(None)?; // --token-file, ASKUSER_TOKEN, or serve's own file
//! let answerer = HttpAnswerer::new("http://127.0.0.1:8765", token)?.on_link(|url| eprintln!("answer at {url}"));
//! let ask_user = AskUser::builder().answerer(answerer).build()?;
//! # drop(ask_user);
//! # Ok(())
//! # }
//! ```
//!
//! # Which crate do I need?
//!
//! Every askuser crate, what it is for, its heavy dependencies and its features: the table in
//! the [README](https://example.invalid/askuser#which-crate-do-i-need).
//!
//! # Feature flags
//!
//! - `http` (default): [`HttpAnswerer`], [`Racing`] and [`ClientError`] (reqwest with rustls).
//! - `schema`: `utoipa::ToSchema` on the wire types, for the server's `OpenAPI` document.

#[cfg(feature = "http")]
mod http;
mod paths;
#[cfg(feature = "http")]
mod race;
#[cfg(feature = "http")]
pub mod reply;
mod token;
pub mod wire;

use std::time::Duration;

#[cfg(feature = "http")]
pub use http::{ClientError, HttpAnswerer};
pub use paths::{default_data_dir, default_token_file, encode_segment, is_cleartext_beyond_loopback};
#[cfg(feature = "http")]
pub use race::Racing;
pub use token::{
    ApiToken, MIN_TOKEN_CHARS, PrivateFileError, TOKEN_ENV, TokenError, TokenSource, random_hex,
    read_private_file,
};

/// How long a question waits when the asker does not say: one hour.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_hours(1);

/// The longest timeout an asker may set: seven days.
pub const MAX_TIMEOUT: Duration = Duration::from_hours(7 * 24);
