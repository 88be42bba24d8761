import { type Kysely, type RawBuilder, sql } from 'kysely';
import { isSqlite } from './dialect.js';

/**
 * The audit's per-patient index as an inverted index whose inserts append, instead of a B-tree
 * row per patient and set (`audit_set_patients`). A list page never disclosed before put its 50
 * rows on 50 different leaves of that B-tree: on SQLite about 260 KiB of WAL and 0.9 ms of the
 * audit writer per page, on PostgreSQL 35-40 KiB and 0.5 ms (measured on both layouts). An
 * inverted index appends a set's entries and merges them in bulk later: 6.5 KiB and 0.15 ms, and
 * 5 KiB and 0.1 ms.
 *
 * - SQLite: `audit_set_tokens`, a contentless FTS5 table (`detail=none`: which sets, not where in
 *   them), one row per set whose rowid is the set's new `id` and whose text is one token per
 *   member (store/patientTokens.ts). FTS5 merges its segments as it goes. The sets table is
 *   rebuilt with `id INTEGER PRIMARY KEY`: a plain rowid may change under VACUUM, an alias may not.
 * - PostgreSQL: a GIN index on the members as jsonb (`jsonb_path_ops`), with fast update: new
 *   entries go to a pending list that autovacuum (or the next large insert) merges.
 *
 * The members are read from the sets, so the down migration rebuilds `audit_set_patients`.
 *
 * Upgrading: on PostgreSQL the old table stays for processes of the previous release (see
 * upPostgres), but the index is built inside the migration's transaction, so audit commits wait
 * for the build: migrate in a quiet window. On SQLite, stop the API processes before migrating:
 * one of the previous release would write sets the new index does not know.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (isSqlite(db)) await db.transaction().execute(upSqlite);
  else await upPostgres(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (isSqlite(db)) await db.transaction().execute(downSqlite);
  else await downPostgres(db);
}

/** Sets whose tokens are written per statement while building the index. */
const SETS_PER_STATEMENT = 200;

/** SQLite cannot change a table's key in place: the sets move to a table of the new shape. */
async function rebuildSetsTable(db: Kysely<unknown>, columns: RawBuilder<unknown>): Promise<void> {
  await sql`CREATE TABLE audit_patient_sets_rebuilt (${columns})`.execute(db);
  await sql`INSERT INTO audit_patient_sets_rebuilt (set_id, members, last_used_at)
    SELECT set_id, members, last_used_at FROM audit_patient_sets ORDER BY rowid`.execute(db);
  await sql`DROP TABLE audit_patient_sets`.execute(db);
  await sql`ALTER TABLE audit_patient_sets_rebuilt RENAME TO audit_patient_sets`.execute(db);
  await sql`CREATE INDEX audit_patient_sets_last_used ON audit_patient_sets (last_used_at)`.execute(db);
}

/**
 * A set's members as the FTS5 table's text, as this migration wrote it: one `ascii` token per
 * member, a-y and 0-9 standing for themselves and every other UTF-8 byte written as `z` and two
 * hex digits (an empty ID is `z`). The live writer and the report use the same alphabet
 * (store/patientTokens.ts); this copy is frozen with the migration.
 */
function patientTokensOf(members: readonly string[]): string {
  return members.map(patientToken).join(' ');
}

function patientToken(patientId: string): string {
  let token = '';
  for (const character of patientId) {
    token += /^[a-y0-9]$/.test(character)
      ? character
      : [...Buffer.from(character, 'utf8')].map((byte) => `z${byte.toString(16).padStart(2, '0')}`).join('');
  }
  return token === '' ? 'z' : token;
}

async function upSqlite(db: Kysely<unknown>): Promise<void> {
  await rebuildSetsTable(
    db,
    // AUTOINCREMENT: an id is never given to another set, so no token row left behind by any
    // means could ever attach its patients to a newer set.
    sql`id INTEGER PRIMARY KEY AUTOINCREMENT, set_id TEXT NOT NULL UNIQUE, members TEXT NOT NULL, last_used_at INTEGER NOT NULL`,
  );
  await sql`CREATE VIRTUAL TABLE audit_set_tokens USING fts5(
    tokens, detail = none, content = '', contentless_delete = 1, tokenize = 'ascii'
  )`.execute(db);
  for (let after = 0; ; ) {
    const { rows } = await sql<{ id: number; members: string }>`SELECT id, members FROM audit_patient_sets
      WHERE id > ${after} ORDER BY id LIMIT ${SETS_PER_STATEMENT}`.execute(db);
    if (rows.length === 0) break;
    const values = rows.map(
      (row) => sql`(${row.id}, ${patientTokensOf(JSON.parse(row.members) as string[])})`,
    );
    await sql`INSERT INTO audit_set_tokens (rowid, tokens) VALUES ${sql.join(values)}`.execute(db);
    after = rows[rows.length - 1]!.id;
  }
  await sql`DROP TABLE audit_set_patients`.execute(db);
}

/** 009's table of members, keyed by patient (filled again from the sets by the down migration). */
async function createMembersTable(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TABLE audit_set_patients (
    patient_id text NOT NULL,
    set_id text NOT NULL,
    CONSTRAINT audit_set_patients_key PRIMARY KEY (patient_id, set_id)
  ) ${isSqlite(db) ? sql`WITHOUT ROWID` : sql``}`.execute(db);
}

async function downSqlite(db: Kysely<unknown>): Promise<void> {
  await createMembersTable(db);
  await sql`INSERT OR IGNORE INTO audit_set_patients (patient_id, set_id)
    SELECT member.value, s.set_id FROM audit_patient_sets s, json_each(s.members) AS member`.execute(db);
  await sql`DROP TABLE audit_set_tokens`.execute(db);
  await rebuildSetsTable(
    db,
    sql`set_id TEXT PRIMARY KEY, members TEXT NOT NULL, last_used_at BIGINT NOT NULL`,
  );
}

async function upPostgres(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX audit_patient_sets_members ON audit_patient_sets
    USING gin ((members::jsonb) jsonb_path_ops) WITH (fastupdate = on)`.execute(db);
  // audit_set_patients stays, unread and no longer written by this release: API processes of
  // the previous release, still serving while a release rolls out, write their new sets'
  // members to it, and their sets are in the GIN index all the same. A later release drops it.
}

async function downPostgres(db: Kysely<unknown>): Promise<void> {
  // Refilled whole: sets made since the upgrade have no rows there, pruned ones still do.
  await sql`DELETE FROM audit_set_patients`.execute(db);
  await sql`INSERT INTO audit_set_patients (patient_id, set_id)
    SELECT DISTINCT json_array_elements_text(members::json), set_id FROM audit_patient_sets`.execute(db);
  await sql`DROP INDEX audit_patient_sets_members`.execute(db);
}
