import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { SETTINGS } from '../../src/config/settings.js';
import { settingsTable, TABLE_END, TABLE_START } from '../../src/config/settingsTable.js';

test('the operations guide lists every setting exactly as the settings schema describes it', () => {
  const page = readFileSync(new URL('../../../../docs/operations.md', import.meta.url), 'utf8');
  const start = page.indexOf(TABLE_START);
  const end = page.indexOf(TABLE_END);
  assert.ok(start !== -1 && end > start, 'docs/operations.md keeps the settings table markers');
  const documented = page.slice(start + TABLE_START.length, end).trim();
  assert.equal(documented, settingsTable(SETTINGS), 'run npm run docs:settings');
});

test('the table names each variable once, with its _FILE form and secrecy', () => {
  const table = settingsTable(SETTINGS);
  for (const name of Object.keys(SETTINGS.properties)) {
    assert.equal(table.split(`| \`${name}\` `).length, 2, name);
  }
  assert.match(table, /\| `EDS_KEY_DIGEST_SECRET` \(or `EDS_KEY_DIGEST_SECRET_FILE`\) \| text; secret \|/);
  assert.match(table, /\| `EDS_PORT` \| whole number 0–65535 \| `8080` \|/);
  assert.match(table, /--rate-limit N\\\|default/);
});
