/**
 * A private redis-server for one test file, on a free port, with no persistence: the test may
 * stop and restart it without touching the machine's shared Redis.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import { freePort } from './processes.js';

/**
 * Why the files that start their own redis-server are skipped, or false when it is installed: a
 * machine without Redis still runs the rest of the suite, as one without chromium does.
 */
export const REDIS_SERVER_MISSING: string | false =
  spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).error === undefined
    ? false
    : 'redis-server is not installed (apt-get install redis-server; .ci/run installs it)';

export interface TestRedis {
  url: string;
  /** Kills the server and waits for it to exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port (empty: nothing was saved). */
  start(): Promise<void>;
  /**
   * Holds every client's commands for `ms` (CLIENT PAUSE) without dropping connections.
   * Resolves once the pause is in force, so a command sent afterwards is certainly held;
   * `resumed` settles when the server answers again.
   */
  pause(ms: number): Promise<{ resumed: Promise<boolean> }>;
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
  });
}

export async function startTestRedis(): Promise<TestRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    // A condition, not a time; the bound only ends a hung run on a loaded machine.
    const giveUpAt = Date.now() + 120_000;
    while (!(await ping(port))) {
      if (child.exitCode !== null) throw new Error(`redis-server exited ${child.exitCode}`);
      if (Date.now() > giveUpAt) throw new Error('redis-server did not start');
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  const stop = async () => {
    const running = child;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGKILL');
    await exited;
  };
  // Redis answers OK only after the pause took effect: no race with the command under test,
  // unlike DEBUG SLEEP, whose start cannot be observed from outside.
  const pause = (ms: number) =>
    new Promise<{ resumed: Promise<boolean> }>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(`CLIENT PAUSE ${ms} ALL\r\n`));
      socket.once('data', (data) => {
        socket.destroy();
        // A fresh connection's PING is held until the pause ends.
        if (data.toString().startsWith('+OK')) resolve({ resumed: ping(port) });
        else reject(new Error(`CLIENT PAUSE: ${data.toString().trim()}`));
      });
      socket.once('error', reject);
    });
  await start();
  return { url: `redis://127.0.0.1:${port}`, start, stop, pause };
}
