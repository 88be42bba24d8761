/**
 * The PostgreSQL driver, loaded on first use rather than at start-up: an embedded SQLite
 * deployment never opens a PostgreSQL connection, and loading pg (with the TLS stack it pulls
 * in) costs the process resident memory it would otherwise never need.
 */
import { createRequire } from 'node:module';
import type Pg from 'pg';

let driver: typeof Pg | undefined;

export function pgDriver(): typeof Pg {
  driver ??= createRequire(import.meta.url)('pg') as typeof Pg;
  return driver;
}
