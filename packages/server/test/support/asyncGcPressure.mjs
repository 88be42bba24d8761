/**
 * Preloaded (`--import`) into a server under test, with `--expose-gc`: after every answer it
 * prepares and drops SQLite statements of its own on the store's file, then asks V8 for a full
 * collection that runs as a posted task, outside any JavaScript frame. Statements finalized by
 * such a collection are what aborted the process with a binding built on node::ObjectWrap
 * (better-sqlite3 12 on Node.js 24.19 and later). The count of collections that ran is printed
 * to standard error at exit, so the test can tell that it exercised the path.
 */
import { channel } from 'node:diagnostics_channel';
import { createRequire } from 'node:module';

if (typeof globalThis.gc !== 'function') throw new Error('asyncGcPressure needs --expose-gc');
const Database = createRequire(import.meta.url)('better-sqlite3');
const dataFile = process.env.EDS_GC_PRESSURE_DB;
const db = dataFile ? new Database(dataFile, { readonly: true }) : new Database(':memory:');

let answers = 0;
let collections = 0;
channel('http.server.response.finish').subscribe(() => {
  for (let i = 0; i < 8; i++) db.prepare(`SELECT ${i} AS n, count(*) AS c FROM sqlite_schema`).get();
  // A young-generation collection after every answer and a full one after every sixteenth: the
  // statements die young, and full collections are what make a server slow.
  const type = ++answers % 16 === 0 ? 'major' : 'minor';
  setImmediate(() => globalThis.gc({ type, execution: 'async' }).then(() => collections++));
});
process.on('exit', () => process.stderr.write(`async collections: ${collections}\n`));
