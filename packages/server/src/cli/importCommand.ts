/** `eds import FILE`: loads an NDJSON file atomically (see docs in operator-interface). */
import type { Command } from 'commander';
import { importNdjsonFile } from '../ingest/importFile.js';
import type { runCommand } from './runCommand.js';

export function registerImportCommand(program: Command, run: typeof runCommand): void {
  program
    .command('import')
    .description('load an NDJSON file (validated whole first; written in one transaction)')
    .argument('<file>', 'NDJSON file; audio paths are relative to its folder')
    .action((file: string) => run(({ services }) => importNdjsonFile(services, file)));
}
