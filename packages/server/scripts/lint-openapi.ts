/**
 * Lints the OpenAPI document exactly as a partner downloads it: starts the service on a scratch
 * SQLite database on loopback, fetches /openapi/v1/openapi.json, writes it to a temporary file
 * and runs `redocly lint` with the recommended rules. Any error or warning fails the run, so
 * clients generated from the document stay clean.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fetchServedOpenApi } from './servedOpenApi.js';

const dir = mkdtempSync(join(tmpdir(), 'eds-openapi-'));
try {
  const file = join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(await fetchServedOpenApi(dir), null, 2));
  const require = createRequire(import.meta.url);
  const cli = join(dirname(require.resolve('@redocly/cli/package.json')), 'bin', 'cli.js');
  const run = spawnSync(
    process.execPath,
    [cli, 'lint', file, '--extends', 'recommended', '--format', 'stylish', '--lint-config', 'off'],
    { encoding: 'utf8' },
  );
  const output = `${run.stdout}${run.stderr}`;
  process.stdout.write(output);
  // redocly exits 0 on warnings; a warning is a generated client's anonymous class, so it fails too.
  const clean = run.status === 0 && !/\bwarnings?\b/i.test(output.replace(/0 warnings?/gi, ''));
  if (!clean) {
    console.error('OpenAPI lint: the served document has errors or warnings.');
    process.exitCode = 1;
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
