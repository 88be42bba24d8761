/**
 * The service as a partner first meets it: `eds demo --serve` from the server package, a real
 * process on free loopback ports with a demo data set and a working key (its start-up JSON).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@eds/server/test-kit';

const EDS_BIN = join(
  dirname(fileURLToPath(import.meta.resolve('@eds/server/package.json'))),
  'bin',
  'eds.js',
);

export interface DemoServer {
  url: string;
  apiKey: string;
  organizationId: string;
  stop(): Promise<void>;
}

/** Start-up (tsx compiling the sources, the demo data set) is waited for, up to this long. */
const STARTUP_BOUND_MS = 180_000;
/** Times a start is tried again when another process took its free port first. */
const PORT_RACES = 5;

export async function startDemoServer(encounters = 20): Promise<DemoServer> {
  for (let attempt = 1; ; attempt++) {
    const started = await startOnce(encounters);
    if (started !== 'port taken') return started;
    if (attempt === PORT_RACES) throw new Error('eds demo --serve found no free port');
  }
}

async function startOnce(encounters: number): Promise<DemoServer | 'port taken'> {
  const dir = mkdtempSync(join(tmpdir(), 'eds-sdk-demo-'));
  const port = await freePort();
  const child: ChildProcess = spawn(
    process.execPath,
    [EDS_BIN, 'demo', '--encounters', String(encounters), '--serve'],
    {
      env: {
        ...process.env,
        EDS_DATA_DIR: dir,
        EDS_DATABASE_URL: join(dir, 'eds.sqlite'),
        EDS_PORT: String(port),
        EDS_MEDIA_PORT: String(await freePort()),
        EDS_PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
        EDS_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  const url = `http://127.0.0.1:${port}`;
  const giveUpAt = Date.now() + STARTUP_BOUND_MS;
  // Ready is a condition: the start-up JSON printed and the API answering.
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      if (/EADDRINUSE/.test(stderr)) return 'port taken';
      throw new Error(`eds demo --serve exited ${child.exitCode}: ${stderr}`);
    }
    const printed = /^\{.*\}$/m.exec(stdout);
    if (printed && (await answers(`${url}/healthz`))) {
      const demo = JSON.parse(printed[0]) as { api_key: string; organization_id: string };
      return { url, apiKey: demo.api_key, organizationId: demo.organization_id, stop };
    }
    if (Date.now() > giveUpAt) {
      child.kill('SIGKILL');
      await stop();
      throw new Error(`eds demo --serve did not start: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function answers(url: string): Promise<boolean> {
  try {
    return (await fetch(url)).ok;
  } catch {
    return false;
  }
}
