import type { Kysely } from 'kysely';
import { isSqlite } from './dialect.js';

/** Organizations, keys, clinical data, count roll-ups, audit log and the webhook outbox. */
export async function up(db: Kysely<unknown>): Promise<void> {
  const ms = 'bigint' as const;

  await db.schema
    .createTable('organizations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('allowlisted', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('routes', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('api_keys_enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('updated_at', ms, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('digest', 'text', (c) => c.notNull().unique())
    .addColumn('environment', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('expires_at', ms)
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('updated_at', ms, (c) => c.notNull())
    .addColumn('last_used_at', ms)
    .addColumn('created_by', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('api_keys_org')
    .on('api_keys')
    .columns(['organization_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('patients')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('first_name', 'text', (c) => c.notNull())
    .addColumn('last_name', 'text', (c) => c.notNull())
    .addColumn('date_of_birth', 'text', (c) => c.notNull())
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('updated_at', ms, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('encounters')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('patient_id', 'text', (c) => c.notNull().references('patients.id'))
    .addColumn('encounter_type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('date_of_service', ms, (c) => c.notNull())
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('updated_at', ms, (c) => c.notNull())
    .addColumn('demo_training', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  // The list route's order: organization, then created_at, ties by id; demo rows never listed.
  await db.schema
    .createIndex('encounters_list')
    .on('encounters')
    .columns(['organization_id', 'demo_training', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('documents')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('encounter_id', 'text', (c) => c.notNull().references('encounters.id'))
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('schema_type', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('status', 'text')
    .addColumn('workflow_variant', 'text')
    .addColumn('audio_duration_seconds', 'double precision')
    .addColumn('content_format', 'text')
    .addColumn('content_text', 'text')
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('updated_at', ms, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('documents_encounter')
    .on('documents')
    .columns(['encounter_id', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('transcripts')
    .addColumn('document_id', 'text', (c) => c.primaryKey().references('documents.id'))
    .addColumn('finalized', 'integer', (c) => c.notNull())
    .addColumn('provider', 'text')
    .addColumn('audio_duration_seconds', 'double precision')
    .addColumn('turns', 'text', (c) => c.notNull())
    .addColumn('finalized_at', ms)
    .execute();

  await db.schema
    .createTable('recordings')
    .addColumn('document_id', 'text', (c) => c.primaryKey().references('documents.id'))
    .addColumn('object_key', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('byte_size', ms)
    .execute();

  await db.schema
    .createTable('encounter_day_counts')
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('day', 'integer', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('encounter_day_counts_pk', ['organization_id', 'day'])
    .execute();

  await db.schema
    .createTable('audit_log')
    .$call((t) =>
      isSqlite(db)
        ? t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
        : t.addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity()),
    )
    .addColumn('at', ms, (c) => c.notNull())
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('organization_id', 'text')
    .addColumn('key_id', 'text')
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('route', 'text', (c) => c.notNull())
    .addColumn('encounter_id', 'text')
    .addColumn('document_id', 'text')
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('reason_code', 'text')
    .addColumn('duration_ms', 'double precision', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('audit_log_org_at')
    .on('audit_log')
    .columns(['organization_id', 'at'])
    .execute();
  await db.schema.createIndex('audit_log_at').on('audit_log').columns(['at']).execute();

  await db.schema
    .createTable('webhook_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('api_version', 'text', (c) => c.notNull())
    .addColumn('encounter_id', 'text', (c) => c.notNull())
    .addColumn('document_id', 'text', (c) => c.notNull())
    .addColumn('occurred_at', ms, (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', ms, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_events_org')
    .on('webhook_events')
    .columns(['organization_id', 'created_at'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('001_core cannot be reverted; restore from a backup instead');
}
