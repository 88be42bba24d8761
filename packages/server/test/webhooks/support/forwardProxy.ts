/** Starts the forward proxy fixture as its own process on loopback; see fixtures/forwardProxy.ts. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../../support/waitFor.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/forwardProxy.ts', import.meta.url));

export interface ForwardProxy {
  port: number;
  /** `host:port` of every tunnel the proxy opened. */
  connects: string[];
  close(): Promise<void>;
}

export async function startForwardProxy(
  options: { credentials?: string; denyPort?: number } = {},
): Promise<ForwardProxy> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '' };
  if (options.credentials !== undefined) env.PROXY_CREDENTIALS = options.credentials;
  if (options.denyPort !== undefined) env.PROXY_DENY_PORT = String(options.denyPort);
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const connects: string[] = [];
  let port = 0;
  let buffered = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      if (line.startsWith('listening ')) port = Number(line.slice('listening '.length));
      else if (line.startsWith('connect ')) connects.push(line.slice('connect '.length));
    }
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitFor(() => port !== 0 || child.exitCode !== null, 'the forward proxy listening', 120_000);
  if (port === 0) throw new Error('the forward proxy exited before listening');
  return {
    port,
    connects,
    close: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
