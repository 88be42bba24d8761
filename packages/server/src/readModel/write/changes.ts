/**
 * The read model: for every encounter the exact bytes of its summary (the list item, and the
 * inside of the detail answer), for every document its detail, and for every finalized ambient
 * transcript its transcript answer, each with a strong entity tag computed from those bytes.
 *
 * Clinical data changes only through imports and the demo loader; each of them calls
 * `applyReadModelChanges` with what it wrote, inside its own transaction, so a reader never sees
 * stored answers that disagree with the normalized tables (the webhook outbox is written in that
 * same transaction). What depends on what: an encounter's summary on the encounter, its patient
 * and its public documents' summary fields; a document's detail on the document; a transcript
 * answer on the transcript and its document. So a patient's change rewrites the summaries of all
 * its encounters, and a document's change rewrites its encounter's summary (and, for a document
 * moved to another encounter, the summary of the one it left).
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../database/schema.js';
import { encounterIdsOfDocuments, encounterIdsOfPatients } from './sources.js';
import { ANSWER_PAGE, writeDocumentReads, writeEncounterReads } from './storedAnswers.js';

/** IDs a write touched; any may be absent or empty. */
export interface ReadModelChanges {
  patients?: Iterable<string>;
  encounters?: Iterable<string>;
  documents?: Iterable<string>;
}

/** Rewrites every stored answer the changed rows feed, in the caller's transaction. */
export async function applyReadModelChanges(tx: Kysely<Database>, changes: ReadModelChanges): Promise<void> {
  const updater = new ReadModelUpdater(tx);
  if (changes.documents) await updater.documentsChanged([...changes.documents]);
  if (changes.patients) await updater.patientsChanged([...changes.patients]);
  if (changes.encounters) updater.encountersChanged(changes.encounters);
  await updater.flush();
}

/**
 * The same, for a large write made in batches (an import): document answers are rewritten with
 * each batch, but encounter summaries only once, at `flush`, however many of the batches (its
 * patient, itself, each of its documents) touched an encounter. Call `flush` before the
 * transaction commits.
 */
export class ReadModelUpdater {
  private readonly encounters = new Set<string>();
  constructor(private readonly tx: Kysely<Database>) {}

  encountersChanged(ids: Iterable<string>): void {
    for (const id of ids) this.encounters.add(id);
  }

  async patientsChanged(ids: readonly string[]): Promise<void> {
    this.encountersChanged(await encounterIdsOfPatients(this.tx, [...new Set(ids)]));
  }

  async documentsChanged(ids: readonly string[]): Promise<void> {
    const documents = [...new Set(ids)];
    if (documents.length === 0) return;
    // Before the document answers are rewritten: they name the encounter a moved document left.
    this.encountersChanged(await encounterIdsOfDocuments(this.tx, documents));
    await writeDocumentReads(this.tx, documents);
  }

  async flush(): Promise<void> {
    const ids = [...this.encounters];
    this.encounters.clear();
    for (let i = 0; i < ids.length; i += ANSWER_PAGE) {
      await writeEncounterReads(this.tx, ids.slice(i, i + ANSWER_PAGE));
    }
  }
}
