/**
 * Every module of src/ can be the first one a process imports. An import cycle lets a module run
 * before one it depends on has finished, and the first use of that one's exports then fails with
 * a ReferenceError ("Cannot access … before initialization"), but only for the import orders that
 * reach it. Each module is imported here as the entry of a fresh module graph, so a new entry
 * point, test or tool can start anywhere. (The lint step's dependency-cruiser rules refuse cycles,
 * runtime or type-only, before they get this far.)
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Worker } from 'node:worker_threads';

const SRC = new URL('../src/', import.meta.url);
const HOOKS = new URL('./support/freshGraphHooks.mjs', import.meta.url);

/** Modules that run on import, each in a worker of its own with what it expects to be given. */
const ENTRY_MODULES: Record<string, { argv?: string[]; workerData?: (scratch: string) => unknown }> = {
  // The CLI: `--help` prints usage and exits once every command's module has been imported.
  'cli/main.ts': { argv: ['--help'] },
  // The SQLite audit writer thread: opens the database it is given.
  'audit/sqliteWriterThread.ts': {
    workerData: (scratch) => ({
      path: join(scratch, 'audit.sqlite'),
      busyTimeoutMs: 1000,
      synchronous: 'normal',
    }),
  },
};

function sourceModules(dir: URL): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      if (statSync(new URL(name, dir)).isDirectory()) {
        return sourceModules(new URL(`${name}/`, dir)).map((path) => `${name}/${path}`);
      }
      return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [name] : [];
    });
}

const scratch = mkdtempSync(join(tmpdir(), 'eds-module-graph-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

// Loader hooks are per thread: the worker registers tsx itself (as the audit writer thread does),
// then the hooks that keep graphs apart.
const IMPORT_EACH = `
const { parentPort, workerData } = require('node:worker_threads');
const { register } = require('node:module');
(async () => {
  (await import('tsx/esm/api')).register();
  register(workerData.hooks, { data: { sourceRoot: workerData.sourceRoot } });
  const failures = [];
  let graph = 0;
  for (const module of workerData.modules) {
    graph += 1;
    try {
      await import(module + '?graph=' + graph);
    } catch (error) {
      failures.push(module + ': ' + String((error && error.stack) || error));
    }
  }
  parentPort.postMessage({ failures });
})();
`;

const IMPORT_ENTRY = `
const { parentPort, workerData } = require('node:worker_threads');
import('tsx/esm/api')
  .then((tsx) => { tsx.register(); return import(workerData.module); })
  .then(
    () => parentPort.postMessage({ failures: [] }),
    (error) => parentPort.postMessage({ failures: [String((error && error.stack) || error)] }),
  );
`;

/**
 * Runs a worker until it reports its failures. A worker that exits on its own with code 0 (the
 * CLI after `--help`) got past every import.
 */
function runWorker(code: string, options: ConstructorParameters<typeof Worker>[1]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(code, { eval: true, stdout: true, stderr: true, ...options });
    worker.stdout.resume();
    worker.stderr.resume();
    let reported: string[] | undefined;
    worker.on('message', (message: { failures?: string[] }) => {
      if (message.failures === undefined || reported !== undefined) return;
      reported = message.failures;
      void worker.terminate();
    });
    worker.on('error', (error) => {
      reported ??= [String(error.stack ?? error)];
    });
    worker.on('exit', (code) => {
      if (reported !== undefined) resolve(reported);
      else if (code === 0) resolve([]);
      else reject(new Error(`worker exited with code ${code} before reporting`));
    });
  });
}

test('every module of src/ imports first, in a fresh module graph, without a ReferenceError', async () => {
  const modules = sourceModules(SRC);
  assert.ok(modules.includes('readModel/read/pages.ts') && modules.includes('cli/main.ts'));
  const href = (module: string) => new URL(module, SRC).href;
  const plain = modules.filter((module) => !(module in ENTRY_MODULES));
  const failures = (
    await Promise.all([
      runWorker(IMPORT_EACH, {
        workerData: { modules: plain.map(href), hooks: HOOKS.href, sourceRoot: SRC.href },
      }),
      ...Object.entries(ENTRY_MODULES).map(([module, entry]) =>
        runWorker(IMPORT_ENTRY, {
          argv: entry.argv ?? [],
          workerData: { ...(entry.workerData?.(scratch) as object | undefined), module: href(module) },
        }),
      ),
    ])
  ).flat();
  assert.deepEqual(failures, []);
});
