/** Child processes for the benchmark: the eds CLI, the server under test, and RSS sampling. */
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

export const ROOT = join(import.meta.dirname, '..');
const EDS = edsBin(ROOT);

/** The eds command of a checkout (this one, or the code a benchmark compares with). */
export function edsBin(root: string): string {
  return join(root, 'packages', 'server', 'bin', 'eds.js');
}

/**
 * The Node.js binary that runs a checkout's eds: this process's own, unless `--before-node` named
 * another for the code compared with (a runtime upgrade is measured old runtime against new).
 */
const nodeOfRoot = new Map<string, string>();

export function runCheckoutOn(root: string, node: string): void {
  if (!existsSync(node)) throw new Error(`--before-node ${node}: no such file`);
  nodeOfRoot.set(resolve(root), node);
}

export function nodeFor(root: string): string {
  return nodeOfRoot.get(resolve(root)) ?? process.execPath;
}

export function eds(args: string[], env: Record<string, string>, root = ROOT): any {
  const result = spawnSync(nodeFor(root), [edsBin(root), ...args], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (result.status !== 0) throw new Error(`eds ${args.join(' ')} failed (${result.status})`);
  return JSON.parse(result.stdout);
}

/** The same, without blocking this process (the soak's load generator and receiver run here). */
export function edsAsync(args: string[], env: Record<string, string>): Promise<any> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [EDS, ...args],
      { env: { ...process.env, ...env }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`eds ${args.join(' ')} failed: ${stderr.trim().split('\n').at(-1)}`));
        else resolve(JSON.parse(stdout));
      },
    );
  });
}

export interface Child {
  process: ChildProcess;
  stop(): Promise<void>;
  /** Peak resident set size so far (VmHWM), in bytes. */
  peakRss(): number;
}

/** Starts a child and resolves when `ready(line)` matches a line it prints on stdout. */
export async function startChild(
  command: string,
  args: string[],
  env: Record<string, string>,
  ready: (line: string) => boolean,
  timeoutMs = 60_000,
): Promise<Child> {
  const child = spawn(command, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (args.some((a) => a.endsWith(join('bin', 'eds.js')))) {
    child.stdout!.resume();
    return childHandle(child);
  }
  await new Promise<void>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not start`)), timeoutMs);
    lines.on('line', (line) => {
      if (ready(line)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
  });
  child.stdout!.resume();
  return childHandle(child);
}

function childHandle(child: ChildProcess): Child {
  return {
    process: child,
    peakRss: () => processMemory(child.pid!).peak,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/**
 * The Node flags the container image runs the service with (the Dockerfile's ENTRYPOINT): a
 * young generation of 8 MB semi-spaces instead of V8's 16 MB (measured on the list route at 1M
 * encounters: peak RSS 134 MB instead of 174-234 MB, with no measurable change in req/s), and
 * Maglev's finished compilation jobs destroyed on the request thread instead of queued for a
 * background thread (peak 148 MB instead of 160 at 100,000 encounters, same CPU per answer).
 */
export const SERVICE_NODE_FLAGS = ['--max-semi-space-size=8', '--no-maglev-destroy-on-background'];

/** The environment the image sets for the process's own runtime (the Dockerfile's ENV). */
export const SERVICE_RUNTIME_ENV: Record<string, string> = { MALLOC_ARENA_MAX: '2' };

function checkImageFlags(): void {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const entrypoint = /^ENTRYPOINT (.*)$/m.exec(dockerfile)?.[1] ?? '';
  for (const flag of SERVICE_NODE_FLAGS) {
    if (!entrypoint.includes(JSON.stringify(flag))) {
      throw new Error(
        `the Dockerfile's ENTRYPOINT no longer runs node with ${flag}: measure what production runs`,
      );
    }
  }
  for (const [name, value] of Object.entries(SERVICE_RUNTIME_ENV)) {
    if (!new RegExp(`^\\s*(ENV\\s+)?${name}=${value}\\b`, 'm').test(dockerfile)) {
      throw new Error(`the Dockerfile no longer sets ${name}=${value}: measure what production runs`);
    }
  }
}

/**
 * Starts the bare node:http ceiling (bench/ceiling.mjs) on the recorded answers, with plain
 * `node` and no loader, so that its figures, memory included, are Node's own; `flags` adds Node
 * flags (a profile).
 */
export function startCeiling(
  recordedFile: string,
  flags: string[] = [],
  wrapper: string[] = [],
): Promise<Child & { port: number }> {
  return startRecordedServer('ceiling.mjs', recordedFile, flags, wrapper);
}

/**
 * Starts the framework floor (bench/frameworkFloor.mjs): bare Fastify answering the same recorded
 * bytes, started and measured as the ceiling is.
 */
export function startFrameworkFloor(
  recordedFile: string,
  wrapper: string[] = [],
): Promise<Child & { port: number }> {
  return startRecordedServer('frameworkFloor.mjs', recordedFile, [], wrapper);
}

async function startRecordedServer(
  script: string,
  recordedFile: string,
  flags: string[],
  wrapper: string[],
): Promise<Child & { port: number }> {
  let port = 0;
  const command = [...wrapper, process.execPath, ...flags, join(ROOT, 'bench', script), recordedFile];
  const ready = (line: string) => {
    port = JSON.parse(line).port;
    return true;
  };
  // Under a wrapper such as valgrind, start-up takes many times longer.
  const child = await startChild(
    command[0]!,
    command.slice(1),
    {},
    ready,
    wrapper.length > 0 ? 600_000 : 60_000,
  );
  return { ...child, port };
}

/** How many times a server is started on fresh ports when it exits before listening. */
const PORT_RACES = 5;

/**
 * Starts `eds serve` as production runs it, on free ports it picks (EDS_PORT, EDS_MEDIA_PORT),
 * and resolves once /healthz answers. A port free a moment ago can be taken before the child
 * listens; a child that exits before it is healthy is started again on fresh ports.
 * `extraFlags` adds Node flags for this run only (the benchmark's `--profile`); `node` runs it on
 * another Node.js binary (`npm run bench:memory`'s variants); `wrapper` runs it under another
 * program (`npm run bench:instructions`' valgrind). With `admin`, the admin listener (metrics)
 * gets a free port too (EDS_ADMIN_PORT), returned as `adminPort`.
 */
export async function startEdsServer(
  env: Record<string, string>,
  extraFlags: string[] = [],
  root = ROOT,
  node = nodeFor(root),
  wrapper: string[] = [],
  admin = false,
): Promise<Child & { port: number; adminPort?: number }> {
  checkImageFlags();
  const command = [...wrapper, node, ...SERVICE_NODE_FLAGS, ...extraFlags, edsBin(root), 'serve'];
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const adminPort = admin ? await freePort() : undefined;
    const ports = {
      EDS_PORT: String(port),
      EDS_MEDIA_PORT: String(await freePort()),
      ...(adminPort === undefined ? {} : { EDS_ADMIN_PORT: String(adminPort) }),
    };
    const child = await startChild(
      command[0]!,
      command.slice(1),
      { ...SERVICE_RUNTIME_ENV, ...env, ...ports },
      () => true,
    );
    if (await becameHealthy(child, port, wrapper.length > 0 ? 600 : 30)) return { ...child, port, adminPort };
    await child.stop();
    if (child.process.exitCode === null || attempt === PORT_RACES) {
      throw new Error(`eds serve did not become healthy (exit code ${child.process.exitCode})`);
    }
  }
}

/** Whether /healthz answers before the child exits (or `seconds` pass). */
async function becameHealthy(child: Child, port: number, seconds: number): Promise<boolean> {
  for (let i = 0; i < seconds * 10 && child.process.exitCode === null; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return true;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

/** A port that was free a moment ago. */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * The code a benchmark compares with (`--before`): a directory holding another checkout (built
 * here with its own `npm run build`), or a commit, built once beside the results by
 * `git archive` (not a git worktree: nothing is added to the repository's metadata), sharing this
 * checkout's installed dependencies. Returns the root to run its `eds` from.
 */
export function beforeRoot(pathOrRef: string, resultsDir: string): string {
  const asPath = resolve(pathOrRef);
  if (existsSync(asPath) && statSync(asPath).isDirectory()) {
    buildServer(asPath);
    return asPath;
  }
  return commitBuild(pathOrRef, resultsDir);
}

/**
 * Compiles a checkout's server (`npm run build`): production runs the compiled output, so the
 * figures are those of the code as it is now.
 */
export function buildServer(root: string): void {
  const build = spawnSync('npm', ['run', 'build', '-w', 'packages/server'], { cwd: root, stdio: 'inherit' });
  if (build.status !== 0) throw new Error(`build failed in ${root}`);
}

function commitBuild(ref: string, resultsDir: string): string {
  const git = (args: string[]) => {
    const r = spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`--before ${ref} is neither a directory nor a commit: ${r.stderr}`);
    return r.stdout.trim();
  };
  const sha = git(['rev-parse', '--verify', `${ref}^{commit}`]);
  const dir = join(resultsDir, `before-${sha.slice(0, 12)}`);
  if (existsSync(join(dir, 'packages', 'server', 'dist', 'cli', 'main.js'))) return dir;
  mkdirSync(dir, { recursive: true });
  const archive = spawnSync(
    'sh',
    ['-c', `git archive ${sha} packages/server tsconfig.base.json CHANGELOG.md | tar -x -C "${dir}"`],
    { cwd: ROOT, stdio: 'inherit' },
  );
  if (archive.status !== 0) throw new Error('git archive failed');
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  const serverModules = join(ROOT, 'packages', 'server', 'node_modules');
  if (existsSync(serverModules)) symlinkSync(serverModules, join(dir, 'packages', 'server', 'node_modules'));
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const build = spawnSync(
    process.execPath,
    [tsc, '-p', join(dir, 'packages', 'server', 'tsconfig.build.json')],
    {
      stdio: 'inherit',
    },
  );
  if (build.status !== 0) throw new Error(`building ${ref} failed`);
  return dir;
}

/** A build of the service compared with this code: a name and the checkout it runs from. */
export interface Build {
  name: string;
  root: string;
}

/** `--build NAME=DIR|COMMIT`: the checkout (a commit is built beside the results). */
export function parseBuild(text: string, resultsDir: string): Build {
  const at = text.indexOf('=');
  if (at <= 0) throw new Error(`--build wants NAME=DIR|COMMIT, got "${text}"`);
  return { name: text.slice(0, at), root: beforeRoot(text.slice(at + 1), resultsDir) };
}

/** `VAR=VALUE VAR=VALUE`, as the scripts' environment options take them; `option` names the option in errors. */
export function parseEnvPairs(text: string, option: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of text.split(/\s+/).filter(Boolean)) {
    const at = pair.indexOf('=');
    if (at < 1) throw new Error(`${option} "${text}": "${pair}" is not VAR=VALUE`);
    env[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return env;
}

/** A process's memory as the kernel counts it (/proc/PID/status), in bytes. */
export interface ProcessMemory {
  /** VmHWM: the peak so far. */
  peak: number;
  rss: number;
  anon: number;
  file: number;
  threads: number;
}

export function processMemory(pid: number): ProcessMemory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
  return {
    peak: kb('VmHWM'),
    rss: kb('VmRSS'),
    anon: kb('RssAnon'),
    file: kb('RssFile'),
    threads: readdirSync(`/proc/${pid}/task`).length,
  };
}
