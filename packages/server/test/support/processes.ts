/** Real `eds serve` processes for tests: started on free ports, ready once /healthz answers. */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { EDS_BIN } from './cli.js';

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
  child: ChildProcess;
  stdout: string[];
  /** Everything the process wrote to standard error so far. */
  stderr(): string;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Times a start is tried again when another process took its free port first. */
export const PORT_RACES = 5;

/**
 * A free port is only free until someone binds it: between `freePort()` and the child's listen,
 * another test's process (or an outgoing connection's ephemeral port) can take it. The child
 * then exits with "cannot listen ... EADDRINUSE", and the start is tried on fresh ports.
 */
export async function startServeProcess(
  env: Record<string, string>,
  args: string[] = [],
): Promise<ServeProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startServeProcessOnce(env, args);
    } catch (error) {
      if (!(error instanceof PortTakenError) || attempt === PORT_RACES) throw error;
    }
  }
}

class PortTakenError extends Error {}

async function startServeProcessOnce(env: Record<string, string>, args: string[]): Promise<ServeProcess> {
  const port = await freePort();
  const mediaPort = await freePort();
  const child = spawn(process.execPath, [EDS_BIN, 'serve', ...args], {
    env: { ...env, EDS_PORT: String(port), EDS_MEDIA_PORT: String(mediaPort) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  child
    .stdout!.setEncoding('utf8')
    .on('data', (chunk: string) => stdout.push(...chunk.split('\n').filter(Boolean)));
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  // Ready is a condition, not a time: on a loaded machine start-up (tsx compiling the sources in
  // the main thread and the audit writer thread) has taken over 15 s. The bound only ends a hung run.
  const giveUpAt = Date.now() + STARTUP_BOUND_MS;
  for (;;) {
    if (child.exitCode !== null) {
      await exited;
      const message = `eds serve exited ${child.exitCode}: ${stderr}`;
      throw /cannot listen: .*EADDRINUSE/.test(stderr) ? new PortTakenError(message) : new Error(message);
    }
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      // not yet listening
    }
    if (Date.now() > giveUpAt) {
      // A child left running would keep the test file's process, and so the whole run, alive.
      child.kill('SIGKILL');
      throw new Error(`eds serve did not start: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    child,
    stdout,
    stderr: () => stderr,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}
