// Transpiles src/ to plain JavaScript in a folder beside it, file by file with esbuild (the
// transform tsx applies when it loads a .ts file), for the test run's `eds` subprocesses.
// The folder sits at src/'s depth so paths relative to a module (../../guides/) still resolve.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { buildSync } from 'esbuild';

function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Writes `outDir/<path>.js` for every `src/<path>.ts` of the package at `packageRoot`. */
export function transpileSources(packageRoot, outDir) {
  const src = join(packageRoot, 'src');
  buildSync({
    entryPoints: sourceFiles(src),
    outbase: src,
    outdir: outDir,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    tsconfig: join(packageRoot, 'tsconfig.build.json'),
    logLevel: 'error',
  });
}
