"""FastMCP tools (MCP Python SDK, pip `mcp` 1.x) that ask forms made by the SDK's own helper.

Each tool calls `ctx.elicit(message, schema=Model)`, which turns the pydantic model into
`requestedSchema` and validates an accepted answer against the model.

    python python_forms.py --capture   # prints the forms' elicitation/create params (generate.sh)
    python python_forms.py --serve     # serves the tools on stdio; each returns what it got as JSON

In `--capture`, an in-memory client records the params exactly as the server sent them.
"""

import asyncio
import json
import sys
from typing import Optional

import mcp
from importlib.metadata import version
from mcp.server.fastmcp import Context, FastMCP
from mcp.shared.memory import create_connected_server_and_client_session
from mcp.types import ElicitResult
from pydantic import BaseModel, Field


class DeleteFiles(BaseModel):
    confirm: bool = Field(description="Delete all 214 files? This cannot be undone.")


class Booking(BaseModel):
    """An Optional field of each primitive kind, beside required ones."""

    confirm: bool = Field(description="Book the table?")
    guests: int = Field(ge=1, le=12, description="How many guests?")
    note: Optional[str] = None
    alternative_date: Optional[str] = Field(default=None, description="Another date, if full")
    high_chair: Optional[bool] = None
    budget: Optional[float] = Field(default=None, ge=0)
    seats: Optional[int] = None


class Feedback(BaseModel):
    rating: int = Field(ge=1, le=5)
    comment: str = Field(default="none", max_length=200)
    subscribe: bool = False
    tags: Optional[list[str]] = None


FORMS = [
    ("delete_files", "Delete all 214 files? This cannot be undone.", DeleteFiles),
    ("booking", "The restaurant is full at 19:00. Book 20:30 instead?", Booking),
    ("feedback", "How was it?", Feedback),
]

server = FastMCP("python-forms")


def tool(name, message, model):
    async def ask(ctx: Context) -> str:
        result = await ctx.elicit(message=message, schema=model)
        data = result.data.model_dump(mode="json") if result.action == "accept" else None
        return json.dumps({"action": result.action, "data": data})

    server.add_tool(ask, name=name)


for name, message, model in FORMS:
    tool(name, message, model)


async def main():
    captured = []

    async def on_elicit(context, params):
        captured.append(params.model_dump(by_alias=True, exclude_none=True, mode="json"))
        return ElicitResult(action="decline")

    async with create_connected_server_and_client_session(server, elicitation_callback=on_elicit) as client:
        for name, _, _ in FORMS:
            await client.call_tool(name, {})
    forms = [{"name": name, "params": params} for (name, _, _), params in zip(FORMS, captured)]
    json.dump({"sdk": f"mcp {version('mcp')} (Python)", "forms": forms}, sys.stdout, indent=2)
    sys.stdout.write("\n")


if sys.argv[1:] == ["--serve"]:
    server.run("stdio")
elif sys.argv[1:] == ["--capture"]:
    asyncio.run(main())
else:
    sys.exit("usage: python_forms.py --capture | --serve")
