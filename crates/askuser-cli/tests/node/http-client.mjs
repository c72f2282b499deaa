// The official MCP TypeScript SDK as a remote host: connects to `askuser serve`'s /mcp over
// Streamable HTTP with the API token, optionally declares form elicitation, calls one tool, and
// prints what the model would receive as one JSON line.
//
// usage: node http-client.mjs REPLY URL TOOL   (the token in $ASKUSER_TOKEN, the tool's arguments
//        in $ASKUSER_ARGS)
//   REPLY: pick (the last option of every single-select question), hang (keep the form open until
//          the server cancels it, recording the cancellation), or none (no elicitation capability)
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const [reply, url, tool] = process.argv.slice(2);
const capabilities = reply === 'none' ? {} : { elicitation: { form: {} } };
const client = new Client({ name: 'askuser-node-http-test', version: '0.0.0' }, { capabilities });
const shown = [];
const cancelled = [];

if (reply !== 'none') {
  client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
    const { message, requestedSchema } = request.params;
    shown.push({ message, requestedSchema, requestId: extra.requestId });
    if (reply === 'hang') {
      await new Promise((resolve) => extra.signal.addEventListener('abort', resolve, { once: true }));
      cancelled.push(extra.requestId);
      return { action: 'cancel' };
    }
    const content = {};
    for (const [key, field] of Object.entries(requestedSchema.properties)) {
      if (field.oneOf) content[key] = field.oneOf[field.oneOf.length - 1].const;
      else if (field.type === 'array') content[key] = field.items.anyOf.slice(0, 1).map((o) => o.const);
    }
    return { action: 'accept', content };
  });
}

const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${process.env.ASKUSER_TOKEN}` } },
});
await client.connect(transport);
const { tools } = await client.listTools();
// Long waits: the SDK's 60 s default would cut a person short.
const result = await client.callTool(
  { name: tool, arguments: JSON.parse(process.env.ASKUSER_ARGS) },
  undefined,
  { timeout: 600000 },
);
for (let i = 0; reply === 'hang' && cancelled.length === 0 && i < 200; i++) {
  await new Promise((resolve) => setTimeout(resolve, 10));
}
console.log(JSON.stringify({ server: client.getServerVersion(), tools: tools.map((t) => t.name), result, shown, cancelled }));
await client.close();
