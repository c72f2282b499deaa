"""The official MCP Python SDK (pip `mcp` 1.x) as a remote host of `askuser serve`'s /mcp.

    python python_http_client.py REPLY URL TOOL   (token in $ASKUSER_TOKEN, arguments in $ASKUSER_ARGS)

REPLY: pick (the last option of every single-select question) or none (no elicitation callback,
so the client declares no elicitation). Prints {"tools": [...], "result": ..., "shown": [...]}.
"""

import asyncio
import json
import os
import sys
from datetime import timedelta

from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client
from mcp.types import ElicitResult


async def main() -> None:
    reply, url, tool = sys.argv[1:4]
    shown = []

    async def elicit(context, params):
        schema = params.requestedSchema
        shown.append({"message": params.message, "requestedSchema": schema})
        content = {}
        for key, field in schema["properties"].items():
            if "oneOf" in field:
                content[key] = field["oneOf"][-1]["const"]
            elif field.get("type") == "array":
                content[key] = [field["items"]["anyOf"][0]["const"]]
        return ElicitResult(action="accept", content=content)

    headers = {"Authorization": f"Bearer {os.environ['ASKUSER_TOKEN']}"}
    async with streamablehttp_client(url, headers=headers) as (read, write, _):
        callback = elicit if reply == "pick" else None
        async with ClientSession(read, write, elicitation_callback=callback) as session:
            await session.initialize()
            tools = await session.list_tools()
            result = await session.call_tool(
                tool, json.loads(os.environ["ASKUSER_ARGS"]), read_timeout_seconds=timedelta(seconds=600)
            )
            print(json.dumps({
                "tools": [t.name for t in tools.tools],
                "result": result.model_dump(mode="json", by_alias=True),
                "shown": shown,
            }))


asyncio.run(main())
