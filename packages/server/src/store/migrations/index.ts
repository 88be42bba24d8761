/** Migrations in order. Listed statically so they ship inside a build (no folder scanning). */
import type { Migration, MigrationProvider } from 'kysely';
import * as core from './001_core.js';
import * as webhooks from './002_webhooks.js';
import * as documentSummaryIndex from './003_document_summary_index.js';
import * as auditRequestCount from './004_audit_request_count.js';
import * as readModel from './005_read_model.js';

const MIGRATIONS: Record<string, Migration> = {
  '001_core': core,
  '002_webhooks': webhooks,
  '003_document_summary_index': documentSummaryIndex,
  '004_audit_request_count': auditRequestCount,
  '005_read_model': readModel,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};

export const LATEST_MIGRATION = Object.keys(MIGRATIONS).at(-1) as string;
