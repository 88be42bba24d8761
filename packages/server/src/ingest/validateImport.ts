/**
 * The validation pass: reads the whole file once, checks every line on its own, then checks the
 * references between lines and against the database. Keeps only what those checks need (ids,
 * their organizations and line numbers), never the records themselves.
 */
import { dirname } from 'node:path';
import type { Db } from '../database/connection.js';
import { resolveAudioPath } from './audioSource.js';
import { readNdjsonLines } from './ndjsonLines.js';
import { ProblemList } from './problems.js';
import { type LineReferences, parseImportLine, RECORD_KINDS, type RecordKind } from './records.js';

/** Kind codes in the per-line index; 0 is a blank line. Also the write order (references first). */
export const KIND_CODE: Readonly<Record<RecordKind, number>> = {
  organization: 1,
  patient: 2,
  encounter: 3,
  document: 4,
};

export interface AudioSource {
  readonly documentId: string;
  readonly path: string;
  readonly contentType: string;
}

export interface ImportPlan {
  readonly counts: Record<RecordKind, number>;
  /** The kind of each line by line number, so a write pass skips other lines without parsing them. */
  readonly lineKinds: Uint8Array;
  /** The organization of every encounter a document of the file points at. */
  readonly encounterOrganization: ReadonlyMap<string, string>;
  /** Every organization a record of the file belongs to, in ID order. */
  readonly organizations: readonly string[];
  readonly audio: readonly AudioSource[];
}

export type ValidationResult = { ok: true; plan: ImportPlan } | { ok: false; problems: ProblemList };

interface Seen {
  /** Ids that lines refused for other reasons define: references to them are not reported again. */
  refused: Record<RecordKind, Set<string>>;
  organizations: Map<string, number>;
  patients: Map<string, { line: number; organizationId: string }>;
  encounters: Map<string, { line: number; organizationId: string; patientId: string }>;
  documents: Map<string, { line: number; encounterId: string }>;
  /** References made by refused lines: checked too, so one pass reports everything. */
  refusedReferences: { line: number; refers: LineReferences }[];
}

const LOOKUP_CHUNK = 500;

export async function validateImport(
  db: Db,
  file: string,
  baseDir: string = dirname(file),
): Promise<ValidationResult> {
  const problems = new ProblemList();
  const seen: Seen = {
    refused: { organization: new Set(), patient: new Set(), encounter: new Set(), document: new Set() },
    organizations: new Map(),
    patients: new Map(),
    encounters: new Map(),
    documents: new Map(),
    refusedReferences: [],
  };
  const counts = Object.fromEntries(RECORD_KINDS.map((k) => [k, 0])) as Record<RecordKind, number>;
  const audio: AudioSource[] = [];
  let lineKinds = new Uint8Array(1 << 16);
  // Organization ids repeat on every line; one string per organization keeps the maps small.
  const orgIds = new Map<string, string>();
  const intern = (id: string) => {
    const known = orgIds.get(id);
    if (known !== undefined) return known;
    orgIds.set(id, id);
    return id;
  };

  for await (const { number, text } of readNdjsonLines(file)) {
    const parsed = parseImportLine(text);
    if (!parsed.ok) {
      for (const reason of parsed.reasons) problems.add(number, reason);
      if (parsed.declares) seen.refused[parsed.declares.kind].add(parsed.declares.id);
      if (parsed.refers) seen.refusedReferences.push({ line: number, refers: parsed.refers });
      continue;
    }
    const record = parsed.record;
    if (number >= lineKinds.length) {
      const grown = new Uint8Array(Math.max(lineKinds.length * 2, number + 1));
      grown.set(lineKinds);
      lineKinds = grown;
    }
    lineKinds[number] = KIND_CODE[record.kind];
    counts[record.kind] += 1;
    const duplicate = (first: number | undefined) => {
      if (first === undefined) return false;
      problems.add(number, `duplicate ${record.kind} id ${record.id} (first on line ${first})`);
      return true;
    };
    switch (record.kind) {
      case 'organization':
        if (!duplicate(seen.organizations.get(record.id))) seen.organizations.set(record.id, number);
        break;
      case 'patient':
        if (!duplicate(seen.patients.get(record.id)?.line)) {
          seen.patients.set(record.id, { line: number, organizationId: intern(record.organizationId) });
        }
        break;
      case 'encounter':
        if (!duplicate(seen.encounters.get(record.id)?.line)) {
          seen.encounters.set(record.id, {
            line: number,
            organizationId: intern(record.organizationId),
            patientId: record.patientId,
          });
        }
        break;
      case 'document': {
        if (!duplicate(seen.documents.get(record.id)?.line)) {
          seen.documents.set(record.id, { line: number, encounterId: record.encounterId });
        }
        if (record.audio && !record.audio.missing) {
          const resolved = await resolveAudioPath(baseDir, record.audio.path);
          if ('problem' in resolved) problems.add(number, resolved.problem);
          else
            audio.push({ documentId: record.id, path: resolved.path, contentType: record.audio.contentType });
        }
        break;
      }
    }
  }

  const encounterOrganization = await checkReferences(db, seen, problems);
  if (problems.count > 0) return { ok: false, problems };
  const organizations = new Set<string>(seen.organizations.keys());
  for (const { organizationId } of seen.patients.values()) organizations.add(organizationId);
  for (const { organizationId } of seen.encounters.values()) organizations.add(organizationId);
  for (const organizationId of encounterOrganization.values()) organizations.add(organizationId);
  return {
    ok: true,
    plan: { counts, lineKinds, encounterOrganization, organizations: [...organizations].sort(), audio },
  };
}

/**
 * References resolve over the whole file and then the database; records that already exist keep
 * their organization (moving data between tenants is not something an import does silently).
 */
async function checkReferences(db: Db, seen: Seen, problems: ProblemList): Promise<Map<string, string>> {
  const wantedOrgs = new Set<string>();
  for (const p of seen.patients.values())
    if (!seen.organizations.has(p.organizationId)) wantedOrgs.add(p.organizationId);
  for (const e of seen.encounters.values())
    if (!seen.organizations.has(e.organizationId)) wantedOrgs.add(e.organizationId);
  for (const { refers } of seen.refusedReferences)
    if (refers.organizationId !== undefined && !seen.organizations.has(refers.organizationId))
      wantedOrgs.add(refers.organizationId);
  const storedOrgs = await existingIds(db, wantedOrgs);
  const orgExists = (id: string) =>
    seen.organizations.has(id) || storedOrgs.has(id) || seen.refused.organization.has(id);

  const patientIds = new Set(seen.patients.keys());
  for (const e of seen.encounters.values()) patientIds.add(e.patientId);
  for (const { refers } of seen.refusedReferences) if (refers.patientId) patientIds.add(refers.patientId);
  const storedPatients = await organizationsOf(db, 'patients', patientIds);

  const encounterIds = new Set(seen.encounters.keys());
  for (const d of seen.documents.values()) encounterIds.add(d.encounterId);
  for (const { refers } of seen.refusedReferences)
    if (refers.encounterId) encounterIds.add(refers.encounterId);
  const storedEncounters = await organizationsOf(db, 'encounters', encounterIds);

  const storedDocuments = await organizationsOf(db, 'documents', seen.documents.keys());

  const notFound = (what: string, id: string) =>
    `${what} ${JSON.stringify(id)} exists neither in the file nor in the database`;
  const moved = (kind: string, id: string, from: string, to: string) =>
    `${kind} ${id} belongs to organization ${from} in the database; an import cannot move it to ${to}`;

  for (const [id, p] of seen.patients) {
    if (!orgExists(p.organizationId)) problems.add(p.line, notFound('organization_id', p.organizationId));
    const stored = storedPatients.get(id);
    if (stored !== undefined && stored !== p.organizationId)
      problems.add(p.line, moved('patient', id, stored, p.organizationId));
  }

  for (const [id, e] of seen.encounters) {
    if (!orgExists(e.organizationId)) problems.add(e.line, notFound('organization_id', e.organizationId));
    const stored = storedEncounters.get(id);
    if (stored !== undefined && stored !== e.organizationId)
      problems.add(e.line, moved('encounter', id, stored, e.organizationId));
    const patientOrg = seen.patients.get(e.patientId)?.organizationId ?? storedPatients.get(e.patientId);
    if (patientOrg === undefined) {
      if (!seen.refused.patient.has(e.patientId)) problems.add(e.line, notFound('patient_id', e.patientId));
    } else if (patientOrg !== e.organizationId) {
      problems.add(
        e.line,
        `patient ${e.patientId} belongs to organization ${patientOrg}, not to the encounter's organization ${e.organizationId}`,
      );
    }
  }

  // A refused line's references: only whether they exist (its other checks wait for its fields).
  const known = {
    patient: (id: string) => seen.patients.has(id) || storedPatients.has(id) || seen.refused.patient.has(id),
    encounter: (id: string) =>
      seen.encounters.has(id) || storedEncounters.has(id) || seen.refused.encounter.has(id),
  };
  for (const { line, refers } of seen.refusedReferences) {
    const { organizationId, patientId, encounterId } = refers;
    if (organizationId !== undefined && !orgExists(organizationId))
      problems.add(line, notFound('organization_id', organizationId));
    if (patientId !== undefined && !known.patient(patientId))
      problems.add(line, notFound('patient_id', patientId));
    if (encounterId !== undefined && !known.encounter(encounterId))
      problems.add(line, notFound('encounter_id', encounterId));
  }

  const encounterOrganization = new Map<string, string>();
  for (const [id, d] of seen.documents) {
    const org = seen.encounters.get(d.encounterId)?.organizationId ?? storedEncounters.get(d.encounterId);
    if (org === undefined) {
      if (!seen.refused.encounter.has(d.encounterId))
        problems.add(d.line, notFound('encounter_id', d.encounterId));
      continue;
    }
    encounterOrganization.set(d.encounterId, org);
    const stored = storedDocuments.get(id);
    if (stored !== undefined && stored !== org) problems.add(d.line, moved('document', id, stored, org));
  }
  return encounterOrganization;
}

async function existingIds(db: Db, ids: Iterable<string>): Promise<Set<string>> {
  const found = new Set<string>();
  for (const batch of inChunks(ids)) {
    const rows = await db.selectFrom('organizations').select('id').where('id', 'in', batch).execute();
    for (const row of rows) found.add(row.id);
  }
  return found;
}

async function organizationsOf(
  db: Db,
  table: 'patients' | 'encounters' | 'documents',
  ids: Iterable<string>,
): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const batch of inChunks(ids)) {
    const rows = await db
      .selectFrom(table)
      .select(['id', 'organization_id'])
      .where('id', 'in', batch)
      .execute();
    for (const row of rows) found.set(row.id, row.organization_id);
  }
  return found;
}

function* inChunks(ids: Iterable<string>): Generator<string[]> {
  let batch: string[] = [];
  for (const id of ids) {
    batch.push(id);
    if (batch.length === LOOKUP_CHUNK) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}
