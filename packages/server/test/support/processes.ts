/**
 * Real `eds serve` processes for tests. Each binds ports of its own choosing (EDS_PORT=0 and
 * EDS_MEDIA_PORT=0, EDS_ADMIN_PORT=0 where asked for) and is ready once it says so in its
 * `api listening` line, which names the URLs it bound.
 *
 * A port picked free beforehand is only free until someone binds it: under parallel test files
 * another file's server could take it, and its /healthz then answered for a child that had failed
 * to listen. With port 0 there is nothing to race for, and the URLs come from the child itself.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import pino from 'pino';
import { EDS_BIN } from './cli.js';

/** A port that was free a moment ago: for something that must not answer (a closed port). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export const STARTUP_BOUND_MS = 180_000;

export interface ServeProcess {
  url: string;
  /** The admin listener's URL, when EDS_ADMIN_PORT was set. */
  adminUrl: string | undefined;
  child: ChildProcess;
  /** The lines written to standard output at the level the test asked for (EDS_LOG_LEVEL). */
  stdout: string[];
  /** Everything the process wrote to standard error so far. */
  stderr(): string;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

interface ListeningLine {
  msg: 'api listening';
  url: string;
  admin_url: string | null;
}

export async function startServeProcess(
  env: Record<string, string>,
  args: string[] = [],
): Promise<ServeProcess> {
  // The child logs at `info` at least, so that its `api listening` line is written; the lines
  // below the level the test asked for are left out of what the test sees.
  const asked = env.EDS_LOG_LEVEL ?? 'info';
  // pino's own level numbers; `silent` is above every line.
  const shownFrom = pino.levels.values[asked] ?? Number.POSITIVE_INFINITY;
  const level = shownFrom < pino.levels.values.info! ? asked : 'info';
  const child = spawn(process.execPath, [EDS_BIN, 'serve', ...args], {
    env: { ...env, EDS_PORT: '0', EDS_MEDIA_PORT: '0', EDS_LOG_LEVEL: level },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  let listening: ListeningLine | undefined;
  let announced: () => void = () => {};
  const ready = new Promise<void>((resolve) => (announced = resolve));
  let partial = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    for (const line of lines.filter(Boolean)) {
      const record = parsedLine(line);
      if (record?.msg === 'api listening' && listening === undefined) {
        listening = record as unknown as ListeningLine;
        announced();
      }
      if (record === undefined || (record.level as number) >= shownFrom) stdout.push(line);
    }
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  // 'close', not 'exit': by then everything the child wrote has been read.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  // Ready is a condition, not a time: on a loaded machine start-up (tsx compiling the sources in
  // the main thread and the audit writer thread) has taken over 15 s. The bound only ends a hung run.
  let bound: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>((resolve) => {
    bound = setTimeout(() => resolve('hung'), STARTUP_BOUND_MS);
  });
  const outcome = await Promise.race([
    ready.then(() => 'ready' as const),
    exited.then(() => 'exited' as const),
    hung,
  ]);
  clearTimeout(bound);
  if (outcome === 'exited') throw new Error(`eds serve exited ${await exited}: ${stderr}`);
  if (outcome === 'hung') {
    // A child left running would keep the test file's process, and so the whole run, alive.
    child.kill('SIGKILL');
    throw new Error(`eds serve did not start: ${stderr}`);
  }
  return {
    url: listening!.url,
    adminUrl: listening!.admin_url ?? undefined,
    child,
    stdout,
    stderr: () => stderr,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

function parsedLine(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
