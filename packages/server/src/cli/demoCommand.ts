/** `eds demo [--seed N] [--encounters N] [--serve]`: a working sandbox in one command. */
import type { Command } from 'commander';
import { DEFAULT_DEMO_ENCOUNTERS, DEFAULT_DEMO_SEED, MAX_DEMO_ENCOUNTERS } from '../demo/demoPlan.js';
import { loadDemo } from '../demo/loadDemo.js';
import { parseWholeNumber } from './optionParsers.js';
import { note, printJson } from './output.js';
import { progressBar } from './progressBar.js';
import type { runCommand } from './runCommand.js';
import { serveUntilSignal } from './serveCommands.js';

interface DemoCommandOptions {
  seed: number;
  encounters: number;
  serve: boolean;
  worker: boolean;
}

export function registerDemoCommand(program: Command, run: typeof runCommand): void {
  program
    .command('demo')
    .description('migrate, load a synthetic demo data set (idempotent) and print a working API key')
    .option(
      '--seed <n>',
      'data set seed (same seed, same data)',
      parseWholeNumber(0, 2 ** 31 - 1),
      DEFAULT_DEMO_SEED,
    )
    .option(
      '--encounters <n>',
      'encounters in the main organization',
      parseWholeNumber(0, MAX_DEMO_ENCOUNTERS),
      DEFAULT_DEMO_ENCOUNTERS,
    )
    .option('--serve', 'then run the API (as eds serve)', false)
    .option('--worker', 'with --serve: also run webhook delivery', false)
    .action((opts: DemoCommandOptions) =>
      run(
        async ({ services, config }) => {
          const bar = progressBar('loading demo data');
          const demo = await loadDemo(services, {
            seed: opts.seed,
            encounters: opts.encounters,
            onProgress: bar.update,
          });
          bar.finish();
          // Without a curl line when the API did not start: a script must not take the key's line as
          // a sign that something answers at the base URL.
          const printDemo = (baseUrl: string, next: string, withCurl = true) => {
            // Quoted: zsh (macOS's shell) reads an unquoted `?` as a glob and refuses the line.
            const curl = `curl -H 'Authorization: Bearer ${demo.token}' '${baseUrl}/external/v1/encounters?limit=2'`;
            printJson({
              base_url: baseUrl,
              api_key: demo.token,
              organization_id: demo.organizationId,
              key_id: demo.keyId,
              encounters: demo.encounters,
              seed: opts.seed,
              organizations: demo.organizations,
              examples: demo.examples,
              ...(withCurl ? { curl } : {}),
            });
            note(
              `Demo data loaded (${demo.encounters.toLocaleString('en-US')} encounters); the JSON object on standard output holds its api_key, shown only this once. ${next}`,
            );
          };
          if (!opts.serve) printDemo(config.publicBaseUrl, 'Run `eds serve`, then try its curl line.');
          else {
            // The key is printed once the API answers, so its curl line works at once.
            let printed = false;
            try {
              await serveUntilSignal(services, {
                api: true,
                worker: opts.worker,
                onStarted: ({ apiUrl }) => {
                  printed = true;
                  printDemo(
                    listeningBaseUrl(config.publicBaseUrl, apiUrl),
                    'The API is listening: try its curl line.',
                  );
                },
              });
            } catch (error) {
              // The key is already stored and never shown again: a start that failed keeps it.
              if (!printed)
                printDemo(
                  config.publicBaseUrl,
                  'The API did not start (below), so it has no curl line; `eds serve` runs the API for this key.',
                  false,
                );
              throw error;
            }
          }
          return undefined;
        },
        { requireSchema: false },
      ),
    );
}

/** A base URL naming port 0 asked for any free port: the URL is the one the API got. */
function listeningBaseUrl(configured: string, apiUrl: string | undefined): string {
  return apiUrl !== undefined && new URL(configured).port === '0' ? apiUrl : configured;
}
