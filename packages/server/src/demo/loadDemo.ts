/**
 * `eds demo`: migrates, loads the synthetic data set, and mints a key for the main organization.
 * Generation is streamed: patients and encounters are made and written a batch at a time, each
 * batch in its own transaction, so a million encounters take bounded memory.
 */

import { Readable } from 'node:stream';
import type { Insertable } from 'kysely';
import { SCOPES } from '../contract/routes.js';
import { refreshPlannerStatistics } from '../database/plannerStatistics.js';
import type { PatientsTable } from '../database/schema.js';
import { mintApiKey } from '../domain/apiKeys.js';
import type { Services } from '../services.js';
import { upsertOrganization } from '../store/organizations.js';
import { upgradeStore } from '../upgradeStore.js';
import { type BundleWriter, createBundleWriter } from './bundleWriter.js';
import {
  AUDIO_POOL,
  DEMO_ORGANIZATIONS,
  DETAILED_ENCOUNTERS,
  type DemoOrgKey,
  patientCount,
  WINDOW_START,
} from './demoPlan.js';
import { createDemoFaker } from './faker.js';
import {
  DemoGenerator,
  type DemoPatient,
  type EncounterBundle,
  type EncounterShape,
  type StoredWav,
} from './generator.js';
import { toneWav } from './wav.js';

export interface DemoOptions {
  seed: number;
  /** Encounters of the main organization (the other organizations are fixed and small). */
  encounters: number;
  onProgress?: (done: number, total: number) => void;
}

/** The records worth trying by hand: each awkward case once, plus one complete encounter. */
const SPECIAL_ENCOUNTERS: Readonly<Record<string, EncounterShape>> = {
  complete: { type: 'ambient', demoTraining: false, internalDocument: false },
  unfinalized_transcript: { type: 'ambient', demoTraining: false, transcript: 'unfinalized' },
  no_recording: { type: 'ambient', demoTraining: false, recording: 'none' },
  recording_missing_from_storage: { type: 'ambient', demoTraining: false, recording: 'missing' },
  internal_document: { type: 'clinical_documentation', demoTraining: false, internalDocument: true },
  demo_training: { type: 'ambient', demoTraining: true },
};

export interface DemoResult {
  organizationId: string;
  organizations: Record<DemoOrgKey, string>;
  keyId: string;
  token: string;
  encounters: number;
  examples: Record<string, { encounter_id: string; document_ids: string[] }>;
}

const BATCH = 1000;
const DEMO_SQLITE_CACHE_KIB = 256 * 1024;

export async function loadDemo(services: Services, options: DemoOptions): Promise<DemoResult> {
  await upgradeStore(services.store.db);
  // Bulk inserts with random-looking keys touch pages all over each index; a larger page cache
  // while loading keeps them in memory. Put back afterwards: `demo --serve` goes on serving.
  const sqlite = services.store.sqlite;
  const previousCache = sqlite?.pragma('cache_size', { simple: true });
  sqlite?.pragma(`cache_size = -${DEMO_SQLITE_CACHE_KIB}`);
  try {
    return await loadData(services, options);
  } finally {
    if (previousCache !== undefined) sqlite?.pragma(`cache_size = ${Number(previousCache)}`);
  }
}

async function loadData(services: Services, options: DemoOptions): Promise<DemoResult> {
  const db = services.store.db;
  const audio = await storeAudioPool(services);
  const { faker, random } = await createDemoFaker();
  const generator = new DemoGenerator(options.seed, faker, random, audio);
  const writer = createBundleWriter(services.store, services.logger);

  const sizes = DEMO_ORGANIZATIONS.map((org) =>
    org.encounters === 'scaled' ? options.encounters : org.encounters,
  );
  const total = sizes.reduce((a, b) => a + b, 0) + Object.keys(SPECIAL_ENCOUNTERS).length;
  let done = 0;
  const progress = (n: number) => {
    done += n;
    options.onProgress?.(done, total);
  };

  const organizations = {} as Record<DemoOrgKey, string>;
  const examples: DemoResult['examples'] = {};
  for (const [index, spec] of DEMO_ORGANIZATIONS.entries()) {
    const organizationId = generator.organizationId(spec.key);
    organizations[spec.key] = organizationId;
    await upsertOrganization(db, {
      id: organizationId,
      name: spec.name,
      allowlisted: spec.allowlisted,
      routes: spec.routes,
      apiKeysEnabled: spec.apiKeysEnabled,
      createdAt: WINDOW_START,
      updatedAt: WINDOW_START,
    });
    const count = sizes[index]!;
    const patients = await writePatients(writer, generator, organizationId, spec.key, patientCount(count));
    const main = spec.key === 'main';
    await writeInBatches(
      writer,
      count,
      (i) =>
        generator.encounter(organizationId, spec.key, i, patients, {
          brief: main && i >= DETAILED_ENCOUNTERS,
        }),
      progress,
    );
    if (main) {
      const names = Object.keys(SPECIAL_ENCOUNTERS);
      const bundles = names.map((name) =>
        generator.encounter(organizationId, spec.key, `special:${name}`, patients, SPECIAL_ENCOUNTERS[name]),
      );
      await writer.encounters(bundles);
      bundles.forEach((bundle, i) => {
        examples[names[i]!] = {
          encounter_id: String(bundle.encounter.id),
          document_ids: bundle.documents.map((d) => String(d.id)),
        };
      });
      progress(bundles.length);
    }
    await writer.finish(organizationId);
  }

  const { key, token } = await mintApiKey(
    db,
    services.digestKey,
    {
      organizationId: organizations.main,
      scopes: SCOPES,
      kind: 'organization',
      environment: services.config.deploymentMode === 'sandbox' ? 'test' : 'live',
      createdBy: 'demo',
    },
    services.clock(),
  );
  await refreshPlannerStatistics(services.store, services.logger);
  return {
    organizationId: organizations.main,
    organizations,
    keyId: key.id,
    token,
    encounters: total,
    examples,
  };
}

async function storeAudioPool(services: Services): Promise<StoredWav[]> {
  const stored: StoredWav[] = [];
  for (const spec of AUDIO_POOL) {
    const wav = toneWav({ seconds: spec.seconds, frequency: spec.frequency });
    const { byteSize } = await services.media.put(spec.key, Readable.from([wav]), 'audio/wav');
    stored.push({ key: spec.key, byteSize });
  }
  return stored;
}

async function writePatients(
  writer: BundleWriter,
  generator: DemoGenerator,
  organizationId: string,
  orgKey: string,
  count: number,
): Promise<DemoPatient[]> {
  const patients: DemoPatient[] = [];
  for (let start = 0; start < count; start += BATCH) {
    const rows: Insertable<PatientsTable>[] = [];
    for (let i = start; i < Math.min(count, start + BATCH); i++) {
      const { row, patient } = generator.patient(organizationId, orgKey, i);
      rows.push(row);
      patients.push(patient);
    }
    await writer.patients(rows);
  }
  return patients;
}

async function writeInBatches(
  writer: BundleWriter,
  count: number,
  make: (index: number) => EncounterBundle,
  progress: (n: number) => void,
): Promise<void> {
  for (let start = 0; start < count; start += BATCH) {
    const bundles: EncounterBundle[] = [];
    for (let i = start; i < Math.min(count, start + BATCH); i++) bundles.push(make(i));
    await writer.encounters(bundles);
    progress(bundles.length);
  }
}
