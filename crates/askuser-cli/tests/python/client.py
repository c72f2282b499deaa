"""One MCP round trip with the official Python SDK against `ASKUSER mcp` (argv[1:] is the command).

The client shows no form: it accepts each form by picking every field's first choice, as a person
who presses Enter would. Prints the tool result's text.
"""

import asyncio
import sys

from mcp import ClientSession, StdioServerParameters, stdio_client, types

ARGUMENTS = {"questions": [
    {"header": "Plan", "question": "Which plan?", "options": [{"label": "Small"}, {"label": "Large"}]},
    {"header": "Extras", "question": "Which extras?", "multi_select": True,
     "options": [{"label": "Backups"}, {"label": "Support"}]},
]}


def first_choice(field):
    """The first choice of a single-choice field, or a list of it for a multiple-choice one."""
    if "enum" in field:
        return field["enum"][0]
    if "oneOf" in field:
        return field["oneOf"][0]["const"]
    items = field.get("items", {})
    if "enum" in items:
        return [items["enum"][0]]
    return [items["anyOf"][0]["const"]]


async def elicit(context, params):
    schema = params.requested_schema
    schema = schema.model_dump(by_alias=True, exclude_none=True) if hasattr(schema, "model_dump") else schema
    # The choice fields; the free-text `*_other` fields stay empty.
    content = {name: first_choice(field) for name, field in schema["properties"].items()
               if "enum" in field or "oneOf" in field or "items" in field}
    return types.ElicitResult(action="accept", content=content)


async def main():
    server = StdioServerParameters(command=sys.argv[1], args=sys.argv[2:])
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write, elicitation_callback=elicit) as session:
            await session.initialize()
            tools = await session.list_tools()
            assert [t.name for t in tools.tools] == ["ask_user_question"], tools
            result = await session.call_tool("ask_user_question", ARGUMENTS)
            print(result.content[0].text)


asyncio.run(main())
