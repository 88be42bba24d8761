/**
 * The shared fixture builder: organizations, patients, encounters, documents, transcripts,
 * recordings and keys with sensible defaults, written through the same store functions as the
 * importer. Tests say only what matters to them.
 */
import { digestToken, staticDigestKey } from '../../src/auth/digest.js';
import { type RouteGroup, SCOPES, type Scope } from '../../src/contract/routes.js';
import { type Db, inTransaction } from '../../src/database/connection.js';
import type { ApiKeyKind } from '../../src/database/schema.js';
import { mintApiKey } from '../../src/domain/apiKeys.js';
import { newId } from '../../src/ids.js';
import { applyReadModelChanges } from '../../src/readModel/write/changes.js';
import { setApiKeyState } from '../../src/store/apiKeys.js';
import {
  upsertDocuments,
  upsertEncounters,
  upsertPatients,
  upsertRecordings,
  upsertTranscripts,
} from '../../src/store/clinicalWrites.js';
import { upsertOrganization } from '../../src/store/organizations.js';

export const TEST_DIGEST_SECRET = 'test-digest-secret-0123456789abcdef';
export const TEST_MEDIA_SECRET = 'test-media-secret-0123456789abcdef';
const T0 = Date.parse('2026-05-01T15:00:00.000Z');

export interface OrgSpec {
  id?: string;
  name?: string;
  allowlisted?: boolean;
  routes?: RouteGroup[];
  apiKeysEnabled?: boolean;
}

export interface EncounterSpec {
  id?: string;
  patientId?: string;
  createdAt?: number;
  demoTraining?: boolean;
  encounterType?: string;
}

export interface DocumentSpec {
  id?: string;
  schemaType?: string;
  title?: string;
  createdAt?: number;
  /** For ambient_transcript: the transcript (default finalized with two turns); null for none. */
  transcript?: {
    finalized?: boolean;
    turns?: { speaker: string; start: number; end: number; text: string }[];
  } | null;
  /** For ambient_transcript: the recording's object key (default none). */
  recordingKey?: string;
  content?: string;
}

export interface KeySpec {
  scopes?: readonly Scope[];
  kind?: ApiKeyKind;
  environment?: 'live' | 'test';
  expiresAt?: number | null;
  state?: 'active' | 'disabled' | 'revoked';
}

export class FixtureBuilder {
  readonly digestKey = staticDigestKey(TEST_DIGEST_SECRET);
  /** Everything this builder created that must never appear in a log: tokens, digests, PHI. */
  readonly secrets = new Set<string>();
  constructor(readonly db: Db) {}

  remember<T extends string>(secret: T): T {
    this.secrets.add(secret);
    return secret;
  }

  async organization(spec: OrgSpec = {}): Promise<string> {
    const id = spec.id ?? newId('org');
    await upsertOrganization(this.db, {
      id,
      name: spec.name ?? `Clinic ${id.slice(-4)}`,
      allowlisted: spec.allowlisted ?? true,
      routes: spec.routes ?? ['encounters', 'documents'],
      apiKeysEnabled: spec.apiKeysEnabled ?? true,
      updatedAt: T0,
    });
    return id;
  }

  async patient(organizationId: string, id: string = newId('pat')): Promise<string> {
    await inTransaction(this.db, async (tx) => {
      await upsertPatients(tx, [
        {
          id,
          organization_id: organizationId,
          first_name: 'Ana',
          last_name: this.remember(`Silva-${id.slice(-6)}`),
          date_of_birth: '1980-02-29',
          created_at: T0,
          updated_at: T0,
        },
      ]);
      await applyReadModelChanges(tx, { patients: [id] });
    });
    return id;
  }

  async encounter(organizationId: string, spec: EncounterSpec = {}): Promise<string> {
    const id = spec.id ?? newId('enc');
    const patientId = spec.patientId ?? (await this.patient(organizationId));
    const createdAt = spec.createdAt ?? T0;
    await inTransaction(this.db, async (tx) => {
      await upsertEncounters(tx, [
        {
          id,
          organization_id: organizationId,
          patient_id: patientId,
          encounter_type: spec.encounterType ?? 'ambient',
          status: 'completed',
          date_of_service: createdAt - 3_600_000,
          created_at: createdAt,
          updated_at: createdAt + 300_000,
          demo_training: spec.demoTraining ? 1 : 0,
        },
      ]);
      await applyReadModelChanges(tx, { encounters: [id] });
    });
    return id;
  }

  /** Many encounters of one patient at once, in one transaction, as an import writes them. */
  async encounters(
    organizationId: string,
    patientId: string,
    createdAts: readonly number[],
  ): Promise<string[]> {
    const rows = createdAts.map((createdAt, i) => ({
      id: `enc_${organizationId.slice(-6)}_${String(i).padStart(6, '0')}`,
      organization_id: organizationId,
      patient_id: patientId,
      encounter_type: 'ambient',
      status: 'completed',
      date_of_service: createdAt - 3_600_000,
      created_at: createdAt,
      updated_at: createdAt + 300_000,
      demo_training: 0 as const,
    }));
    await inTransaction(this.db, async (tx) => {
      await upsertEncounters(tx, rows);
      await applyReadModelChanges(tx, { encounters: rows.map((row) => row.id) });
    });
    return rows.map((row) => row.id);
  }

  async document(organizationId: string, encounterId: string, spec: DocumentSpec = {}): Promise<string> {
    const id = spec.id ?? newId('doc');
    const schemaType = spec.schemaType ?? 'document';
    const ambient = schemaType === 'ambient_transcript';
    const createdAt = spec.createdAt ?? T0 + 60_000;
    await inTransaction(this.db, async (tx) => {
      await upsertDocuments(tx, [
        {
          id,
          encounter_id: encounterId,
          organization_id: organizationId,
          schema_type: schemaType,
          title: spec.title ?? (ambient ? 'Visit recording' : 'SOAP note'),
          status: ambient ? 'completed' : null,
          workflow_variant: ambient ? 'ambient' : null,
          audio_duration_seconds: ambient ? 612.4 : null,
          content_format: schemaType === 'document' ? 'markdown' : null,
          content_text: schemaType === 'document' ? (spec.content ?? '## Subjective\nHeadache.') : null,
          created_at: createdAt,
          updated_at: createdAt + 60_000,
        },
      ]);
      if (ambient && spec.transcript !== null) {
        const t = spec.transcript ?? {};
        await upsertTranscripts(tx, [
          {
            document_id: id,
            finalized: t.finalized === false ? 0 : 1,
            provider: 'example-asr',
            audio_duration_seconds: 612.4,
            turns: JSON.stringify(
              (
                t.turns ?? [
                  { speaker: 'clinician', start: 0, end: 3.2, text: 'Good morning.' },
                  { speaker: 'patient', start: 3.4, end: 6.1, text: 'Morning, doctor.' },
                ]
              ).map((turn) => ({ ...turn, text: this.remember(turn.text) })),
            ),
            finalized_at: t.finalized === false ? null : createdAt,
          },
        ]);
      }
      if (ambient && spec.recordingKey) {
        await upsertRecordings(tx, [
          { document_id: id, object_key: spec.recordingKey, content_type: 'audio/wav', byte_size: null },
        ]);
      }
      await applyReadModelChanges(tx, { documents: [id] });
    });
    return id;
  }

  /** A key; returns its id and its token. */
  async key(organizationId: string, spec: KeySpec = {}): Promise<{ id: string; token: string }> {
    const { key, token } = await mintApiKey(
      this.db,
      this.digestKey,
      {
        organizationId,
        scopes: spec.scopes ?? SCOPES,
        kind: spec.kind ?? 'organization',
        environment: spec.environment ?? 'live',
        expiresAt: spec.expiresAt ?? null,
        createdBy: 'test',
      },
      T0,
    );
    if (spec.state && spec.state !== 'active') await setApiKeyState(this.db, key.id, spec.state, T0);
    this.remember(token);
    this.remember(digestToken(token, TEST_DIGEST_SECRET));
    return { id: key.id, token };
  }
}
