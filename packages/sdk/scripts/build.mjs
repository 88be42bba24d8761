#!/usr/bin/env node
// Builds the package a partner installs: dist/esm (ES modules) and dist/cjs (CommonJS), each
// with declarations and source maps. dist/cjs gets its own package.json so Node and TypeScript
// read its .js and .d.ts files as CommonJS although this package is "type": "module".
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const root = join(dirname(new URL(import.meta.url).pathname), '..');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

rmSync(join(root, 'dist'), { recursive: true, force: true });
for (const project of ['tsconfig.build.json', 'tsconfig.cjs.json']) {
  const run = spawnSync(process.execPath, [tsc, '-p', join(root, project)], { stdio: 'inherit' });
  if (run.status !== 0) process.exit(run.status ?? 1);
}
writeFileSync(join(root, 'dist/cjs/package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);
