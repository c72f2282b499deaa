// The resolve hook of register.mjs: `fs` and `undici` imported by the conformance suite's bundle
// resolve to this directory's shims; every other import, and the shims' own, resolve as usual.
const suite = '/node_modules/@modelcontextprotocol/conformance/';
const shims = { fs: 'fs.mjs', 'node:fs': 'fs.mjs', undici: 'undici.mjs' };

export async function resolve(specifier, context, next) {
  const shim = shims[specifier];
  if (shim && context.parentURL?.includes(suite)) {
    return { url: new URL(shim, import.meta.url).href, shortCircuit: true };
  }
  return next(specifier, context);
}
