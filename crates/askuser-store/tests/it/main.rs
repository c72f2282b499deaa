//! Integration tests of askuser-store: one binary, one module per concern. Every backend runs the
//! same suite (`suite::conformance`); PostgreSQL tests read `ASKUSER_TEST_POSTGRES_URL`.

mod answerer;
mod memory;
mod migrations;
mod model;
mod postgres;
mod race;
mod sqlite;
mod suite;
mod support;
mod tls;
mod upgrade;
