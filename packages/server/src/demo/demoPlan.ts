/** The shape of the demo data set: its organizations, their sizes, and the time window it covers. */
import type { RouteGroup } from '../contract/routes.js';

export type DemoOrgKey = 'main' | 'not_allowlisted' | 'encounters_only' | 'api_keys_off';

export interface DemoOrganization {
  readonly key: DemoOrgKey;
  readonly name: string;
  readonly allowlisted: boolean;
  readonly routes: RouteGroup[];
  readonly apiKeysEnabled: boolean;
  /** Encounters generated for it; the main organization's count is `--encounters`. */
  readonly encounters: number | 'scaled';
}

export const DEMO_ORGANIZATIONS: readonly DemoOrganization[] = [
  {
    key: 'main',
    name: 'Northwind Family Practice',
    allowlisted: true,
    routes: ['encounters', 'documents'],
    apiKeysEnabled: true,
    encounters: 'scaled',
  },
  {
    key: 'not_allowlisted',
    name: 'Lakeside Community Clinic',
    allowlisted: false,
    routes: ['encounters', 'documents'],
    apiKeysEnabled: true,
    encounters: 24,
  },
  {
    key: 'encounters_only',
    name: 'Hillcrest Pediatrics',
    allowlisted: true,
    routes: ['encounters'],
    apiKeysEnabled: true,
    encounters: 24,
  },
  {
    key: 'api_keys_off',
    name: 'Meadowbrook Internal Medicine',
    allowlisted: true,
    routes: ['encounters', 'documents'],
    apiKeysEnabled: false,
    encounters: 24,
  },
];

export const DEFAULT_DEMO_SEED = 1;
export const DEFAULT_DEMO_ENCOUNTERS = 240;
export const MAX_DEMO_ENCOUNTERS = 5_000_000;

/** A fixed window (not "the last 18 months") so the same seed gives the same data on any day. */
export const WINDOW_START = Date.UTC(2025, 4, 1);
export const WINDOW_END = Date.UTC(2026, 10, 1);

/** Encounters of the main organization past this index get short notes and transcripts. */
export const DETAILED_ENCOUNTERS = 1000;

/** Patients per organization: about one per six encounters, never fewer than twelve. */
export function patientCount(encounters: number): number {
  return Math.max(12, Math.ceil(encounters / 6));
}

/** Recordings share a few real WAV objects instead of one file each (fast at any scale). */
export const AUDIO_POOL = [
  { key: 'demo/audio/visit-1.wav', seconds: 3, frequency: 440 },
  { key: 'demo/audio/visit-2.wav', seconds: 4, frequency: 392 },
  { key: 'demo/audio/visit-3.wav', seconds: 3.5, frequency: 523.25 },
  { key: 'demo/audio/visit-4.wav', seconds: 2.5, frequency: 349.23 },
  { key: 'demo/audio/visit-5.wav', seconds: 4.5, frequency: 293.66 },
  { key: 'demo/audio/visit-6.wav', seconds: 3, frequency: 659.25 },
] as const;

/** Referenced by the demo's "recording missing from storage" record and never written. */
export const MISSING_AUDIO_KEY = 'demo/audio/missing-from-storage.wav';
