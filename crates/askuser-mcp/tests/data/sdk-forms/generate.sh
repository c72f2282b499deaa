#!/usr/bin/env bash
# Regenerates python-mcp.json: the elicitation forms that the MCP Python SDK's own helper
# (FastMCP `ctx.elicit(message, schema=Model)`) sends, captured on an in-memory connection.
# Needs the registry once: the SDK goes into a virtualenv at $ASKUSER_MCP_PY_VENV
# (default ~/.cache/askuser-mcp-py). The TypeScript SDK's forms are not captured here: the
# askuser-mcp-cli test `sdk_forms` runs a TypeScript SDK server live (tests/node/forms-server.mjs).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=${ASKUSER_MCP_PY_VENV:-$HOME/.cache/askuser-mcp-py}
if ! [ -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import mcp' 2>/dev/null; then
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install -q --disable-pip-version-check 'mcp==1.30.0' >&2
fi
"$venv/bin/python" "$here/python_forms.py" 2>/dev/null > "$here/python-mcp.json"
echo "wrote $here/python-mcp.json" >&2
