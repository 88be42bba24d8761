/** Migrations in order. Listed statically so they ship inside a build (no folder scanning). */
import type { Migration, MigrationProvider } from 'kysely';
import * as core from './001_core.js';
import * as webhooks from './002_webhooks.js';
import * as documentSummaryIndex from './003_document_summary_index.js';
import * as auditRequestCount from './004_audit_request_count.js';
import * as readModel from './005_read_model.js';
import * as auditDisclosures from './006_audit_disclosures.js';
import * as rotation from './007_rotation.js';
import * as organizationRateLimit from './008_organization_rate_limit.js';
import * as auditPatientSets from './009_audit_patient_sets.js';
import * as auditPatientIndex from './010_audit_patient_index.js';
import * as encounterCounts from './011_encounter_counts.js';
import * as webhookEndpointHealth from './012_webhook_endpoint_health.js';
import * as encounterHourCounts from './013_encounter_hour_counts.js';
import * as encounterDayRunningCounts from './014_encounter_day_running_counts.js';
import * as changeSignals from './015_change_signals.js';

const MIGRATIONS: Record<string, Migration> = {
  '001_core': core,
  '002_webhooks': webhooks,
  '003_document_summary_index': documentSummaryIndex,
  '004_audit_request_count': auditRequestCount,
  '005_read_model': readModel,
  '006_audit_disclosures': auditDisclosures,
  '007_rotation': rotation,
  '008_organization_rate_limit': organizationRateLimit,
  '009_audit_patient_sets': auditPatientSets,
  '010_audit_patient_index': auditPatientIndex,
  '011_encounter_counts': encounterCounts,
  '012_webhook_endpoint_health': webhookEndpointHealth,
  '013_encounter_hour_counts': encounterHourCounts,
  '014_encounter_day_running_counts': encounterDayRunningCounts,
  '015_change_signals': changeSignals,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};

export const LATEST_MIGRATION = Object.keys(MIGRATIONS).at(-1) as string;
