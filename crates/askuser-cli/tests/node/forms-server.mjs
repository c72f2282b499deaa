// An MCP server written with the official TypeScript SDK: each tool asks a form whose
// requestedSchema the SDK's own helper (toJsonSchemaCompat) makes from a zod object, through
// the SDK's elicitInput, which also validates the accepted content against that schema. The tool
// returns what it received as JSON text, or the SDK's validation error.
//
// usage: node forms-server.mjs   (MCP on stdin/stdout; run by askuser's mcp::sdk_forms test)
import * as z from 'zod/v4';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { toJsonSchemaCompat } from '@modelcontextprotocol/sdk/server/zod-json-schema-compat.js';

const forms = {
  booking: {
    message: 'The restaurant is full at 19:00. Book 20:30 instead?',
    schema: z.object({
      confirm: z.boolean().describe('Book the table at 20:30?'),
      guests: z.number().int().min(1).max(12).describe('How many guests?'),
      size: z.enum(['small', 'large']).describe('Which table?'),
      extras: z.array(z.enum(['window', 'quiet', 'high chair'])).min(1).optional(),
      note: z.string().max(200).optional(),
      nickname: z.string().nullable().optional(),
      email: z.email().optional(),
      reminder: z.boolean().default(false),
    }),
  },
  delete_files: {
    message: 'Delete all 214 files? This cannot be undone.',
    schema: z.object({ confirm: z.boolean().describe('Delete all 214 files?') }),
  },
};

const server = new McpServer({ name: 'typescript-forms', version: '1.0.0' });
for (const [name, form] of Object.entries(forms)) {
  server.registerTool(name, { description: form.message }, async () => {
    const requestedSchema = toJsonSchemaCompat(form.schema);
    try {
      const result = await server.server.elicitInput({ message: form.message, requestedSchema });
      return { content: [{ type: 'text', text: JSON.stringify({ requestedSchema, result }) }] };
    } catch (error) {
      return { content: [{ type: 'text', text: JSON.stringify({ requestedSchema, error: String(error) }) }], isError: true };
    }
  });
}
await server.connect(new StdioServerTransport());
