/**
 * Kysely's SQLite dialect, with write transactions begun `IMMEDIATE`.
 *
 * Kysely begins SQLite transactions DEFERRED: the transaction reads from a snapshot and only asks
 * for the write lock at its first write. In WAL mode, if another connection committed in between
 * (the audit writer thread, an `eds import` in another process), that
 * upgrade fails at once with SQLITE_BUSY_SNAPSHOT, which busy_timeout does not retry. Taking the
 * write lock at BEGIN makes a second writer wait its turn under busy_timeout instead.
 */
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
} from 'kysely';

class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

export class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;

  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#config = config;
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config);
  }
}
