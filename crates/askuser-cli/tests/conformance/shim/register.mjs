// Preloaded with `node --import ./shim/register.mjs`: lets the official MCP conformance suite
// (npm @modelcontextprotocol/conformance 0.1.16, built for Node.js 22) run on Node.js 20, and
// reach an askuser serve whose /mcp needs its API token.
//
// - The suite imports `globSync` from `fs`, which Node.js added in 22: the resolve hook
//   (hooks.mjs) hands the suite, and only the suite, `fs.mjs`: node:fs plus the npm `glob`
//   package's `globSync`, which has the same use.
// - The suite has no option for request headers: with ASKUSER_CONFORMANCE_TOKEN set, every
//   request it makes (the SDK client's `fetch`, the DNS-rebinding scenario's undici `request`)
//   carries `Authorization: Bearer TOKEN`, so the scenarios test MCP, not the token check.
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url);

const token = process.env.ASKUSER_CONFORMANCE_TOKEN;
if (token) {
  const fetch = globalThis.fetch;
  globalThis.fetch = (input, init = {}) => {
    const headers = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined));
    if (!headers.has('authorization')) headers.set('authorization', `Bearer ${token}`);
    return fetch(input, { ...init, headers });
  };
}
