/**
 * `eds serve [--worker]` and `eds worker`: the long-running processes. They run until SIGTERM or
 * SIGINT, then close what they started (in-flight requests and deliveries finish first).
 *
 * The HTTP server and the delivery worker are loaded on demand so that one-shot commands such as
 * `eds key create` never load Fastify or the worker.
 */
import type { Command } from 'commander';
import { dataFilesOf } from '../dataFiles.js';
import { OperatorError } from '../domain/errors.js';
import { exposedFiles } from '../privateFiles.js';
import type { Services } from '../services.js';
import type { runCommand } from './runCommand.js';

export interface ServeOptions {
  api: boolean;
  worker: boolean;
  /**
   * Called once everything asked for has started, before any line about the start is logged
   * (warnings included): what it prints comes first on standard output, and a curl line in it
   * works as soon as it appears.
   */
  onStarted?: (started: { apiUrl: string | undefined }) => void;
}

/** Starts the API and/or the delivery worker and resolves once a signal has shut them down. */
export async function serveUntilSignal(services: Services, options: ServeOptions): Promise<void> {
  const exposed = exposedFiles(dataFilesOf(services.config));
  // Listened for from the start: a signal while starting, or from a script that stops the process
  // as soon as it has read the first line, ends it cleanly once started, not abruptly.
  const signals = listenForSignals();
  const stops: (() => Promise<void>)[] = [];
  // Logged once everything has started, after what `onStarted` prints.
  const started: (() => void)[] = [];
  let apiUrl: string | undefined;
  try {
    if (options.api) {
      const { startServer } = await import('../http/server.js');
      const server = await startServer(services);
      stops.push(() => server.close());
      apiUrl = server.url;
      started.push(() =>
        services.logger.info(
          { url: server.url, media_url: server.mediaUrl ?? null, admin_url: server.adminUrl ?? null },
          'api listening',
        ),
      );
    }
    if (options.worker) {
      const { startDeliveryWorker } = await import('../webhooks/worker.js');
      const worker = startDeliveryWorker(services);
      stops.push(() => worker.stop());
      started.push(() => logWorkerStarted(services));
    }
    options.onStarted?.({ apiUrl });
  } catch (error) {
    // Nothing left to shut down on a signal: the process goes on to report the failure.
    signals.stopListening();
    await stopAll(stops);
    warnAboutExposedDataFiles(services, exposed);
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
      throw new OperatorError(
        `cannot listen: ${(error as Error).message} (see EDS_HOST, EDS_PORT, EDS_MEDIA_PORT)`,
      );
    }
    throw error;
  }
  for (const say of started) say();
  warnAboutExposedDataFiles(services, exposed);
  const signal = await signals.next;
  services.logger.info({ signal }, 'shutting down');
  await stopAll(stops);
}

function logWorkerStarted(services: Services): void {
  if (services.config.webhooks.enabled) services.logger.info({ enabled: true }, 'webhook worker started');
  // The event is planned_not_generally_available: nothing is delivered unless switched on.
  else
    services.logger.warn(
      { component: 'webhook-worker' },
      'webhook delivery is off in this deployment (EDS_WEBHOOKS_ENABLED); the worker stays idle',
    );
}

/**
 * Files this version creates 0600 may predate it, or have been copied or restored with a wider
 * mode: the service still starts, and the operator is told which to `chmod`.
 */
function warnAboutExposedDataFiles(services: Services, exposed: ReturnType<typeof exposedFiles>): void {
  for (const file of exposed) {
    services.logger.warn(
      { path: file.path, mode: file.mode },
      'a file holding patient data or secrets is open to other users: chmod it to 600 (folders 700)',
    );
  }
}

async function stopAll(stops: (() => Promise<void>)[]): Promise<void> {
  // Last started, first stopped: the worker before the API it may share the store with.
  for (const stop of stops.reverse()) await stop();
}

/** The first SIGTERM or SIGINT from now, until `stopListening` gives the signals back. */
function listenForSignals(): { next: Promise<NodeJS.Signals>; stopListening: () => void } {
  let onSignal: (signal: NodeJS.Signals) => void = () => {};
  const stopListening = () => {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  };
  const next = new Promise<NodeJS.Signals>((resolve) => {
    onSignal = (signal) => {
      stopListening();
      // A second signal while draining means "now".
      process.once('SIGTERM', () => process.exit(130));
      process.once('SIGINT', () => process.exit(130));
      resolve(signal);
    };
  });
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return { next, stopListening };
}

export function registerServeCommands(program: Command, run: typeof runCommand): void {
  program
    .command('serve')
    .description('run the API and the embedded media host until SIGTERM/SIGINT')
    .option('--worker', 'also run webhook delivery in this process', false)
    .action((opts: { worker: boolean }) =>
      run(async ({ services }) => {
        await serveUntilSignal(services, { api: true, worker: opts.worker });
        return undefined;
      }),
    );

  program
    .command('worker')
    .description('run webhook delivery alone until SIGTERM/SIGINT')
    .action(() =>
      run(async ({ services }) => {
        await serveUntilSignal(services, { api: false, worker: true });
        return undefined;
      }),
    );
}
