#!/usr/bin/env bash
# Makes the virtualenv with the MCP Python SDK the sdk-forms tests use, once, and prints the path
# of its python. The venv lives at $ASKUSER_MCP_PY_VENV (default ~/.cache/askuser-mcp-py);
# the first run needs the package registry (about 20 s).
set -euo pipefail
venv=${ASKUSER_MCP_PY_VENV:-$HOME/.cache/askuser-mcp-py}
if ! { [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import importlib.metadata as m; assert m.version("mcp") == "1.30.0"' 2>/dev/null; }; then
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install -q --disable-pip-version-check 'mcp==1.30.0' >&2
fi
echo "$venv/bin/python"
