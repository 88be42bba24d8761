#!/usr/bin/env node
// The `eds` command. In development the TypeScript sources run through tsx, so `npx eds` works
// right after `npm ci` with no build step. In production (NODE_ENV=production) the compiled
// output of `npm run build` is used when present: no transpiler in the process, less memory.
import { existsSync } from 'node:fs';
import { unsupportedRuntime } from './supportedRuntime.js';

const refusal = unsupportedRuntime(process.versions.node);
if (refusal !== undefined) {
  console.error(refusal);
  process.exit(1);
}

const compiled = new URL('../dist/cli/main.js', import.meta.url);
if (process.env.NODE_ENV === 'production' && existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
