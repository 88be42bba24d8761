/**
 * Writes the settings table of docs/operations.md from the settings schema, between its marker
 * comments. `--check` only reports whether the page is current (exit 1 when not).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SETTINGS } from '../src/config/settings.js';
import { settingsTable, TABLE_END, TABLE_START } from '../src/config/settingsTable.js';

const page = fileURLToPath(new URL('../../../docs/operations.md', import.meta.url));
const text = readFileSync(page, 'utf8');
const start = text.indexOf(TABLE_START);
const end = text.indexOf(TABLE_END);
if (start === -1 || end < start) {
  console.error(`docs/operations.md has no settings table markers (${TABLE_START} … ${TABLE_END})`);
  process.exit(1);
}
const written = `${text.slice(0, start + TABLE_START.length)}\n${settingsTable(SETTINGS)}\n${text.slice(end)}`;
if (process.argv.includes('--check')) {
  if (written !== text) {
    console.error(
      'docs/operations.md: the settings table differs from the schema; run npm run docs:settings',
    );
    process.exit(1);
  }
} else if (written !== text) {
  writeFileSync(page, written);
  console.log('docs/operations.md: settings table written');
}
