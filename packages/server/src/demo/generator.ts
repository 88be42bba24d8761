/**
 * Generates demo records. Every record is derived from (seed, organization, kind, index) alone:
 * its id from a hash of those, its content from a PRNG seeded by the same hash. So a record is
 * identical on every run and whatever else is generated, and re-running the demo is idempotent.
 */
import type { Faker } from '@faker-js/faker';
import type { Insertable } from 'kysely';
import type {
  DocumentsTable,
  EncountersTable,
  PatientsTable,
  RecordingsTable,
  TranscriptsTable,
} from '../database/schema.js';
import { DAY_MS } from '../time.js';
import { planVisit, soapNote, transcriptTurns, visitTitle } from './clinicalText.js';
import { idFromDigest, idFromRandom } from './demoIds.js';
import { MISSING_AUDIO_KEY, WINDOW_START } from './demoPlan.js';
import { pickVisitTime } from './demoTime.js';
import { digestOf, Random } from './random.js';

export interface DemoPatient {
  readonly id: string;
  readonly firstName: string;
}

export interface EncounterBundle {
  encounter: Insertable<EncountersTable>;
  documents: Insertable<DocumentsTable>[];
  transcripts: Insertable<TranscriptsTable>[];
  recordings: Insertable<RecordingsTable>[];
}

export interface EncounterShape {
  type?: 'ambient' | 'clinical_documentation';
  demoTraining?: boolean;
  transcript?: 'finalized' | 'unfinalized';
  recording?: 'pool' | 'none' | 'missing';
  internalDocument?: boolean;
  brief?: boolean;
}

export interface StoredWav {
  readonly key: string;
  readonly byteSize: number;
}

const PROVIDER = 'example-asr';

export class DemoGenerator {
  private readonly random = new Random();

  constructor(
    private readonly seed: number,
    private readonly faker: Faker,
    /** Faker draws from this; reseeded per record together with `random`. */
    private readonly fakerRandom: Random,
    private readonly audio: readonly StoredWav[],
  ) {}

  organizationId(orgKey: string): string {
    return idFromDigest('org', digestOf(this.seed, 'org', orgKey));
  }

  patient(
    organizationId: string,
    orgKey: string,
    index: number,
  ): { row: Insertable<PatientsTable>; patient: DemoPatient } {
    const digest = digestOf(this.seed, orgKey, 'pat', index);
    this.fakerRandom.seedFromBytes(digest, 16);
    const sex = this.faker.person.sexType();
    const firstName = this.faker.person.firstName(sex);
    const lastName = this.faker.person.lastName();
    const born = this.faker.date.birthdate({ mode: 'age', min: 1, max: 94, refDate: WINDOW_START });
    const id = idFromDigest('pat', digest);
    return {
      patient: { id, firstName },
      row: {
        id,
        organization_id: organizationId,
        first_name: firstName,
        last_name: lastName,
        date_of_birth: born.toISOString().slice(0, 10),
        created_at: WINDOW_START,
        updated_at: WINDOW_START,
      },
    };
  }

  encounter(
    organizationId: string,
    orgKey: string,
    label: string | number,
    patients: readonly DemoPatient[],
    shape: EncounterShape = {},
  ): EncounterBundle {
    const digest = digestOf(this.seed, orgKey, 'enc', label);
    const r = this.random;
    r.seedFromBytes(digest, 16);
    const brief = shape.brief ?? false;
    const id = idFromDigest('enc', digest);
    // Drawn first and always all four, so content changes never shift an id.
    const documentIds = [0, 1, 2, 3].map(() => idFromRandom('doc', r));
    const docId = (n: number) => documentIds[n]!;
    const patient = r.pick(patients);
    // Bulk (brief) encounters are lighter: fewer of them carry a transcript and a recording.
    const type = shape.type ?? (r.chance(brief ? 0.4 : 0.6) ? 'ambient' : 'clinical_documentation');
    const dateOfService = pickVisitTime(r);
    const createdAt = dateOfService + r.int(5, 40) * 60_000;
    const visit = planVisit(r);
    const bundle: EncounterBundle = {
      encounter: {
        id,
        organization_id: organizationId,
        patient_id: patient.id,
        encounter_type: type,
        status: 'completed',
        date_of_service: dateOfService,
        created_at: createdAt,
        updated_at: createdAt,
        demo_training: (shape.demoTraining ?? r.chance(0.03)) ? 1 : 0,
      },
      documents: [],
      transcripts: [],
      recordings: [],
    };
    const addDocument = (row: Omit<Insertable<DocumentsTable>, 'encounter_id' | 'organization_id'>) => {
      bundle.documents.push({ ...row, encounter_id: id, organization_id: organizationId });
      bundle.encounter.updated_at = Math.max(Number(bundle.encounter.updated_at), Number(row.updated_at));
    };

    if (type === 'ambient') {
      const transcriptId = docId(0);
      const finalized = (shape.transcript ?? 'finalized') === 'finalized';
      const { turns, durationSeconds } = transcriptTurns(visit, r, patient.firstName, brief);
      const created = createdAt + r.int(10, 40) * 1000;
      const updated = created + r.int(60, 240) * 1000;
      addDocument({
        id: transcriptId,
        schema_type: 'ambient_transcript',
        title: 'Visit recording',
        status: finalized ? 'completed' : 'processing',
        workflow_variant: 'ambient',
        audio_duration_seconds: durationSeconds,
        content_format: null,
        content_text: null,
        created_at: created,
        updated_at: updated,
      });
      bundle.transcripts.push({
        document_id: transcriptId,
        finalized: finalized ? 1 : 0,
        provider: PROVIDER,
        audio_duration_seconds: durationSeconds,
        // An unfinalized transcript is still arriving: only its first turns exist.
        turns: JSON.stringify(finalized ? turns : turns.slice(0, 2)),
        finalized_at: finalized ? updated : null,
      });
      const recording = shape.recording ?? 'pool';
      if (recording !== 'none') {
        const wav = recording === 'missing' ? undefined : r.pick(this.audio);
        bundle.recordings.push({
          document_id: transcriptId,
          object_key: wav?.key ?? MISSING_AUDIO_KEY,
          content_type: 'audio/wav',
          byte_size: wav?.byteSize ?? null,
        });
      }
    }

    const noteCreated = createdAt + r.int(40, 90) * 1000;
    addDocument({
      id: docId(1),
      schema_type: 'document',
      title: `${visitTitle(visit)} note`,
      status: null,
      workflow_variant: null,
      audio_duration_seconds: null,
      content_format: 'markdown',
      content_text: soapNote(visit, r, brief),
      created_at: noteCreated,
      updated_at: noteCreated + r.int(1, 15) * 60_000,
    });

    if (!brief && type === 'clinical_documentation' && r.chance(0.3)) {
      const created = noteCreated + r.int(1, 10) * 60_000;
      addDocument({
        id: docId(2),
        schema_type: 'document',
        title: 'Patient instructions',
        status: null,
        workflow_variant: null,
        audio_duration_seconds: null,
        content_format: 'markdown',
        content_text: `## Your visit: ${visitTitle(visit)}\n\n${visit.reason.plan.map((p) => `- ${p}`).join('\n')}\n\nCall the clinic if your symptoms get worse.`,
        created_at: created,
        updated_at: created,
      });
    }

    if (shape.internalDocument || (!brief && shape.internalDocument === undefined && r.chance(0.05))) {
      const created = noteCreated + DAY_MS / 24;
      // An internal schema type: stored and importable, never listed or served by the API.
      addDocument({
        id: docId(3),
        schema_type: 'internal_summary',
        title: 'Internal coding summary',
        status: 'completed',
        workflow_variant: null,
        audio_duration_seconds: null,
        content_format: null,
        content_text: null,
        created_at: created,
        updated_at: created,
      });
    }
    return bundle;
  }
}
