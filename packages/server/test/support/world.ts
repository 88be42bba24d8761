/**
 * A standard small world for API tests: the caller's organization with one encounter of every
 * interesting kind, a second organization, and keys in every state. Built through the fixture
 * builder so each test reads as "given the world, when …, then …".
 */
import { ROUTES, type RouteDefinition, type RouteId } from '../../src/contract/routes.js';
import type { FixtureBuilder } from './fixtures.js';

export interface World {
  orgA: string;
  orgB: string;
  encounter: string;
  /** A `document` document of `encounter`. */
  note: string;
  /** An `ambient_transcript` with a finalized transcript and a recording in storage. */
  ambient: string;
  /** An ambient transcript whose transcript is not finalized. */
  unfinalized: string;
  /** An ambient transcript with no transcript and no recording. */
  bare: string;
  /** An ambient transcript whose recording object is gone from storage. */
  missingAudio: string;
  /** A document of an internal schema type. */
  internal: string;
  demoEncounter: string;
  demoNote: string;
  /** Another encounter of org A and its note (a document under the wrong encounter). */
  otherEncounter: string;
  otherNote: string;
  encounterB: string;
  noteB: string;
  token: string;
  tokenB: string;
  recordingKey: string;
}

export const AUDIO_BYTES = Buffer.from('RIFF$\u0000\u0000\u0000WAVEfmt fake-audio-bytes-for-tests', 'latin1');

export async function buildWorld(
  fixtures: FixtureBuilder,
  putObject?: (key: string, bytes: Buffer) => Promise<void>,
): Promise<World> {
  const orgA = await fixtures.organization({ name: 'Clinic A' });
  const orgB = await fixtures.organization({ name: 'Clinic B' });
  const encounter = await fixtures.encounter(orgA);
  const recordingKey = `recordings/${encounter}/ambient.wav`;
  if (putObject) await putObject(recordingKey, AUDIO_BYTES);
  const note = await fixtures.document(orgA, encounter, { createdAt: Date.parse('2026-05-01T15:03:00Z') });
  const ambient = await fixtures.document(orgA, encounter, {
    schemaType: 'ambient_transcript',
    recordingKey,
    createdAt: Date.parse('2026-05-01T15:01:00Z'),
  });
  const unfinalized = await fixtures.document(orgA, encounter, {
    schemaType: 'ambient_transcript',
    transcript: { finalized: false },
    createdAt: Date.parse('2026-05-01T15:02:00Z'),
  });
  const bare = await fixtures.document(orgA, encounter, {
    schemaType: 'ambient_transcript',
    transcript: null,
    createdAt: Date.parse('2026-05-01T15:04:00Z'),
  });
  const missingAudio = await fixtures.document(orgA, encounter, {
    schemaType: 'ambient_transcript',
    recordingKey: `recordings/${encounter}/gone.wav`,
    createdAt: Date.parse('2026-05-01T15:05:00Z'),
  });
  const internal = await fixtures.document(orgA, encounter, {
    schemaType: 'internal_summary',
    createdAt: Date.parse('2026-05-01T15:06:00Z'),
  });
  const demoEncounter = await fixtures.encounter(orgA, { demoTraining: true });
  const demoNote = await fixtures.document(orgA, demoEncounter);
  const otherEncounter = await fixtures.encounter(orgA, { createdAt: Date.parse('2026-05-02T10:00:00Z') });
  const otherNote = await fixtures.document(orgA, otherEncounter);
  const encounterB = await fixtures.encounter(orgB);
  const noteB = await fixtures.document(orgB, encounterB);
  const { token } = await fixtures.key(orgA);
  const { token: tokenB } = await fixtures.key(orgB);
  return {
    orgA,
    orgB,
    encounter,
    note,
    ambient,
    unfinalized,
    bare,
    missingAudio,
    internal,
    demoEncounter,
    demoNote,
    otherEncounter,
    otherNote,
    encounterB,
    noteB,
    token,
    tokenB,
    recordingKey,
  };
}

/** A concrete, successful path for each route in the world. */
export function pathFor(
  route: RouteDefinition | RouteId,
  world: World,
  ids: Partial<{ encounter: string; document: string }> = {},
): string {
  const id = typeof route === 'string' ? route : route.id;
  const encounter = ids.encounter ?? world.encounter;
  switch (id) {
    case 'listEncounters':
      return ROUTES.listEncounters.path;
    case 'getEncounter':
      return `/external/v1/encounters/${encounter}`;
    case 'getDocument':
      return `/external/v1/encounters/${encounter}/documents/${ids.document ?? world.note}`;
    case 'getTranscript':
      return `/external/v1/encounters/${encounter}/documents/${ids.document ?? world.ambient}/transcript`;
    case 'getAudio':
      return `/external/v1/encounters/${encounter}/documents/${ids.document ?? world.ambient}/audio`;
  }
}
