/**
 * The SDK as a partner gets it: `npm pack` of the build, then the tarball installed into empty projects with
 * no network and an empty npm cache (so it must need nothing downloaded), then a plain
 * JavaScript ES module, a CommonJS script and a strict TypeScript project (type-checked under
 * `nodenext` and `bundler` resolution, without skipLibCheck, then run) call a real server. A
 * strict project without @types/node type-checks against the published declarations too.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { buildWorld, startTestServer, type TestServer, type World } from '@eds/server/test-kit';

const run = promisify(execFile);
const SDK = resolve(import.meta.dirname, '..');
const REPO = resolve(SDK, '../..');
const CONSUMERS = join(import.meta.dirname, 'consumers');
const TSC = join(REPO, 'node_modules/typescript/bin/tsc');
const NPM_CLI = process.env['npm_execpath'] ?? 'npm';
/**
 * The runtime the consumers run on: this one, or an older Node.js the SDK's engines allow
 * (EDS_SDK_CONSUMER_NODE, which CI sets to the lowest one), while the server stays on its own.
 */
const CONSUMER_NODE = process.env['EDS_SDK_CONSUMER_NODE'] || process.execPath;
const CONSUMER_VERSION = execFileSync(CONSUMER_NODE, ['--version'], { encoding: 'utf8' }).trim();

// The environment without npm's own settings from an enclosing `npm test` (workspace flags).
const cleanEnv = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_')),
);

function npm(args: string[], cwd: string, cache: string) {
  const env = { ...cleanEnv, npm_config_cache: cache, npm_config_update_notifier: 'false' };
  return NPM_CLI.endsWith('.js')
    ? run(process.execPath, [NPM_CLI, ...args], { cwd, env, maxBuffer: 16 << 20 })
    : run('npm', args, { cwd, env, maxBuffer: 16 << 20 });
}

let server: TestServer;
let world: World;
let dir: string;
let tarball: string;
let packed: string[];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'eds-sdk-package-'));
  const cache = join(dir, 'npm-cache');
  // The build `npm test` made first (pretest). Packing without scripts: a rebuild here would
  // replace dist/ under the other test files that import it meanwhile.
  assert.ok(existsSync(join(SDK, 'dist/esm/index.js')), 'build the SDK first: npm run build -w packages/sdk');
  const { stdout } = await npm(['pack', '--json', '--ignore-scripts', '--pack-destination', dir], SDK, cache);
  const [info] = JSON.parse(stdout.slice(stdout.indexOf('['))) as {
    filename: string;
    files: { path: string }[];
  }[];
  assert.ok(info);
  tarball = join(dir, info.filename);
  packed = info.files.map((f) => f.path).sort();
  for (const project of ['js', 'ts', 'ts-without-node']) {
    const root = join(dir, project);
    mkdirSync(root);
    writeFileSync(
      join(root, 'package.json'),
      JSON.stringify({ name: `consumer-${project}`, private: true, type: 'module' }),
    );
    await npm(['install', '--offline', '--no-audit', '--no-fund', tarball], root, cache);
  }
  server = await startTestServer('sqlite');
  world = await buildWorld(server.fixtures, (key, bytes) => server.putObject(key, bytes));
});

after(async () => {
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function consume(file: string, cwd: string) {
  const { stdout } = await run(CONSUMER_NODE, [file, world.encounter, world.ambient], {
    cwd,
    env: { ...cleanEnv, EDS_BASE_URL: server.url, EDS_API_KEY: world.token },
  });
  return JSON.parse(stdout.trim()) as Record<string, unknown>;
}

/** What every consumer must see in the world: org A's list, the finalized transcript, its audio. */
async function expected() {
  const list = await server.api.get('/external/v1/encounters?limit=1', { token: world.token });
  const transcript = await server.api.get(
    `/external/v1/encounters/${world.encounter}/documents/${world.ambient}/transcript`,
    { token: world.token },
  );
  return {
    total: (list.body as { total: number }).total,
    turns: (transcript.body as { transcript: { turns: unknown[] } }).transcript.turns.length,
    audio: true,
    notFound: 'encounter_not_found',
    webhook: 'evt_consumer',
  };
}

describe(`the packed SDK, its consumers on Node.js ${CONSUMER_VERSION}`, () => {
  it('ships only the build, its declarations and maps, the sources they map to, README and licence', () => {
    const outside = packed.filter((p) => !/^(dist\/(esm|cjs)\/|src\/)/.test(p));
    assert.deepEqual(outside, ['LICENSE', 'README.md', 'package.json']);
    assert.ok(packed.includes('dist/esm/index.js') && packed.includes('dist/esm/index.d.ts'));
    assert.ok(packed.includes('dist/cjs/webhooks/index.js') && packed.includes('dist/cjs/package.json'));
    assert.ok(packed.includes('dist/esm/index.js.map') && packed.includes('dist/esm/index.d.ts.map'));
    assert.ok(!packed.some((p) => p.includes('test') || p.startsWith('tsconfig')), packed.join(', '));
  });

  it('refers to nothing outside itself and is ready to publish', () => {
    const installed = join(dir, 'js/node_modules/@eds/sdk');
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
    assert.equal(manifest.private, undefined);
    for (const field of ['name', 'version', 'license', 'repository', 'exports', 'engines']) {
      assert.ok(manifest[field], `package.json has ${field}`);
    }
    assert.deepEqual(manifest.dependencies ?? {}, {}, 'no runtime dependencies');
    assert.doesNotMatch(
      JSON.stringify(manifest.exports),
      /(?<!\.d)\.ts"|\/src\//,
      'exports name the build, never sources',
    );
    for (const file of packed.filter((p) => /\.(js|ts)$/.test(p))) {
      const text = readFileSync(join(installed, file), 'utf8');
      assert.doesNotMatch(text, /packages\/(server|sdk)|\.\.\/server\/|tsconfig\.base/, file);
    }
    // Every source map points at a source shipped in the package.
    for (const file of packed.filter((p) => p.endsWith('.map'))) {
      const map = JSON.parse(readFileSync(join(installed, file), 'utf8')) as { sources: string[] };
      for (const source of map.sources) {
        const target = resolve(dirname(join(installed, file)), source);
        assert.ok(target.startsWith(`${installed}/src/`) && existsSync(target), `${file} → ${source}`);
      }
    }
  });

  it('works from a plain JavaScript ES module', async () => {
    const root = join(dir, 'js');
    copyFileSync(join(CONSUMERS, 'consumer.mjs'), join(root, 'consumer.mjs'));
    assert.deepEqual(await consume('consumer.mjs', root), await expected());
  });

  it('works from CommonJS through require()', async () => {
    const root = join(dir, 'js');
    copyFileSync(join(CONSUMERS, 'consumer.cjs'), join(root, 'consumer.cjs'));
    assert.deepEqual(await consume('consumer.cjs', root), await expected());
  });

  it('type-checks in a strict TypeScript project under nodenext and bundler resolution, then runs', async () => {
    const root = join(dir, 'ts');
    copyFileSync(join(CONSUMERS, 'consumer.ts'), join(root, 'consumer.ts'));
    copyFileSync(join(CONSUMERS, 'consumer-require.cts'), join(root, 'consumer-require.cts'));
    // The partner's own @types/node (the webhook adapters take node:http requests).
    mkdirSync(join(root, 'node_modules/@types'), { recursive: true });
    symlinkSync(join(REPO, 'node_modules/@types/node'), join(root, 'node_modules/@types/node'), 'dir');
    const strict = {
      target: 'ES2022',
      lib: ['ES2023'],
      types: ['node'],
      strict: true,
      exactOptionalPropertyTypes: true,
      noUncheckedIndexedAccess: true,
      skipLibCheck: false,
    };
    const configs = {
      'tsconfig.json': { ...strict, module: 'nodenext', moduleResolution: 'nodenext', outDir: 'out' },
      'tsconfig.bundler.json': { ...strict, module: 'esnext', moduleResolution: 'bundler', noEmit: true },
    };
    for (const [name, compilerOptions] of Object.entries(configs)) {
      const files = name === 'tsconfig.json' ? ['consumer.ts', 'consumer-require.cts'] : ['consumer.ts'];
      writeFileSync(join(root, name), JSON.stringify({ compilerOptions, files }));
      await run(process.execPath, [TSC, '-p', name], { cwd: root }).catch((error) => {
        assert.fail(`${name}: ${error.stdout}${error.stderr}`);
      });
    }
    assert.deepEqual(await consume('out/consumer.js', root), await expected());
  });

  it('type-checks in a strict TypeScript project without @types/node, the webhook adapters included', async () => {
    const root = join(dir, 'ts-without-node');
    const consumer = 'consumer-without-node-types.ts';
    copyFileSync(join(CONSUMERS, consumer), join(root, consumer));
    assert.ok(!existsSync(join(root, 'node_modules/@types/node')), 'no Node types in this project');
    const compilerOptions = {
      target: 'ES2022',
      lib: ['ES2023', 'DOM'],
      types: [],
      strict: true,
      exactOptionalPropertyTypes: true,
      noUncheckedIndexedAccess: true,
      skipLibCheck: false,
      module: 'nodenext',
      moduleResolution: 'nodenext',
      noEmit: true,
    };
    writeFileSync(join(root, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: [consumer] }));
    await run(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: root }).catch((error) => {
      assert.fail(`${error.stdout}${error.stderr}`);
    });
  });
});
