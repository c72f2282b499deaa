// The official MCP TypeScript SDK as a host: declares form elicitation, answers askuser-mcp's
// form like a person would, and prints what the model would receive as one JSON line.
//
// usage: node client.mjs REPLY SERVER [SERVER_ARGS...]   (tool arguments in $ASKUSER_ARGS)
//   REPLY: pick (the last option of single-select questions, the first two of multi-select ones,
//          "typed for TITLE" in a text question's field),
//          other (type an answer into every question's "Other" field), decline, hang (keep the
//          form open until the server cancels the request, recording the cancellation), or none
//          (declare no elicitation capability at all)
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const [reply, command, ...args] = process.argv.slice(2);
const capabilities = reply === 'none' ? {} : { elicitation: { form: {} } };
const client = new Client({ name: 'askuser-node-test', version: '0.0.0' }, { capabilities });
const shown = [];
const cancelled = [];

if (reply !== 'none') {
  client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
    const { message, requestedSchema } = request.params;
    shown.push({ message, requestedSchema, requestId: extra.requestId });
    if (reply === 'decline') return { action: 'decline' };
    if (reply === 'hang') {
      // The SDK aborts the handler's signal when notifications/cancelled names this request.
      await new Promise((resolve) => extra.signal.addEventListener('abort', resolve, { once: true }));
      cancelled.push(extra.requestId);
      return { action: 'cancel' };
    }
    const content = {};
    for (const [key, field] of Object.entries(requestedSchema.properties)) {
      if (reply === 'other') {
        if (key.endsWith('_other')) content[key] = `typed for ${field.title}`;
      } else if (field.oneOf) {
        content[key] = field.oneOf[field.oneOf.length - 1].const;
      } else if (field.type === 'array') {
        content[key] = field.items.anyOf.slice(0, 2).map((option) => option.const);
      } else if (field.enum) {
        content[key] = field.enum[field.enum.length - 1];
      } else if (field.type === 'string' && !key.endsWith('_other')) {
        content[key] = `typed for ${field.title}`;
      }
    }
    return { action: 'accept', content };
  });
}

const transport = new StdioClientTransport({ command, args, stderr: 'inherit' });
await client.connect(transport);
const { tools } = await client.listTools();
const result = await client.callTool({ name: 'ask_user_question', arguments: JSON.parse(process.env.ASKUSER_ARGS) });
// A cancellation may arrive just after the result: give it a moment.
for (let i = 0; reply === 'hang' && cancelled.length === 0 && i < 200; i++) {
  await new Promise((resolve) => setTimeout(resolve, 10));
}
console.log(JSON.stringify({ server: client.getServerVersion(), tools: tools.map((t) => t.name), result, shown, cancelled }));
await client.close();
