#!/usr/bin/env bash
# Regenerates python-mcp.json: the elicitation forms that the MCP Python SDK's own helper
# (FastMCP `ctx.elicit(message, schema=Model)`) sends, captured on an in-memory connection.
# The TypeScript SDK's forms are not captured here: askuser's `mcp::sdk_forms` test runs a
# TypeScript SDK server live (crates/askuser-cli/tests/node/forms-server.mjs).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
py=$("$here/setup.sh")
"$py" "$here/python_forms.py" --capture 2>/dev/null > "$here/python-mcp.json"
echo "wrote $here/python-mcp.json" >&2
