#!/usr/bin/env bash
# Makes the reference oracle's virtualenv with the pinned pydantic-ai-harness release, once, and
# prints the path of its python. From the repository's root:
#   py=$(crates/askuser-core/tests/oracle/setup.sh); "$py" crates/askuser-core/tests/oracle/oracle.py < cases.jsonl
# This folder is a copy of the project's shared oracle (oracle.py and this script, unchanged but
# for this comment), so that the docs' commands run from a clone. It needs PyPI once.
# The venv lives outside this folder (which may be read-only): $ASKUSER_ORACLE_VENV, or ~/.cache/askuser-oracle.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=${ASKUSER_ORACLE_VENV:-$HOME/.cache/askuser-oracle}
if ! { [ -x "$venv/bin/python" ] && "$venv/bin/python" "$here/oracle.py" --version >/dev/null 2>&1; }; then
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install -q --disable-pip-version-check 'pydantic-ai-harness==0.62.0' 'pydantic-ai-slim==2.62.0' 'pydantic==2.14.4' 'pydantic-core==2.50.5' pytest >&2
  "$venv/bin/python" "$here/oracle.py" --version >&2
fi
echo "$venv/bin/python"
