//! The `askuser-mcp` binary, spawned as a child process and driven over stdio by real MCP
//! clients: rmcp's, and the official TypeScript SDK's.

mod node;
mod sdk_forms;
mod server;
mod stdio;
mod terminal;
