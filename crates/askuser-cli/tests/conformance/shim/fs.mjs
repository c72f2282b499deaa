// node:fs as Node.js 22 has it, for the conformance suite: plus `globSync` (npm `glob`).
import fs from 'node:fs';

export * from 'node:fs';
export default fs;
export { globSync } from 'glob';
