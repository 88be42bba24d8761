/**
 * Property: for random data sets of several organizations and random keys (scopes, kinds,
 * states, expiry), every request's answer is the status and reason code that a small reference
 * model of the contract's rules predicts, and no 200 ever carries another organization's data.
 * The model below is written from the contract, independently of the server's code.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { generateToken } from '../../src/auth/token.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { forEachStore } from '../support/stores.js';

const ALL_SCOPES = ['encounters:read', 'patients:read', 'documents:read', 'recordings:read'] as const;
type ScopeName = (typeof ALL_SCOPES)[number];
const ROUTES = {
  list: { group: 'encounters', scopes: ['encounters:read', 'patients:read', 'documents:read'] },
  encounter: { group: 'encounters', scopes: ['encounters:read', 'patients:read', 'documents:read'] },
  document: { group: 'documents', scopes: ['encounters:read', 'documents:read'] },
  transcript: { group: 'documents', scopes: ['encounters:read', 'documents:read'] },
  audio: { group: 'documents', scopes: ['encounters:read', 'documents:read', 'recordings:read'] },
} as const;
type RouteName = keyof typeof ROUTES;

interface OrgModel {
  allowlisted: boolean;
  routes: ('encounters' | 'documents')[];
  apiKeysEnabled: boolean;
}
interface EncounterModel {
  org: number;
  demo: boolean;
  docs: { type: 'document' | 'ambient_transcript' | 'internal'; finalized: boolean }[];
}
interface KeyModel {
  org: number;
  scopes: ScopeName[];
  kind: 'organization' | 'user';
  state: 'active' | 'disabled' | 'revoked';
  expired: boolean;
  environment: 'live' | 'test';
}
interface RequestModel {
  key: number | 'none' | 'malformed' | 'unknown';
  route: RouteName;
  encounter: number | 'unknown';
  document: number | 'unknown';
  extraQuery: boolean;
}

const orgArb = fc.record({
  allowlisted: fc.boolean(),
  routes: fc.subarray(['encounters', 'documents'] as ('encounters' | 'documents')[]),
  apiKeysEnabled: fc.boolean(),
});
const worldArb = fc
  .record({
    orgs: fc.array(orgArb, { minLength: 2, maxLength: 3 }),
    encounters: fc.array(
      fc.record({
        org: fc.nat(2),
        demo: fc.boolean(),
        docs: fc.array(
          fc.record({
            type: fc.constantFrom('document', 'ambient_transcript', 'internal'),
            finalized: fc.boolean(),
          }),
          { minLength: 1, maxLength: 2 },
        ),
      }),
      { minLength: 1, maxLength: 5 },
    ),
    keys: fc.array(
      fc.record({
        org: fc.nat(2),
        scopes: fc.subarray([...ALL_SCOPES]),
        kind: fc.constantFrom('organization', 'organization', 'user'),
        state: fc.constantFrom('active', 'active', 'disabled', 'revoked'),
        expired: fc.boolean(),
        environment: fc.constantFrom('live', 'live', 'live', 'test'),
      }),
      { minLength: 1, maxLength: 4 },
    ),
    requests: fc.array(
      fc.record({
        key: fc.oneof(fc.nat(3), fc.constantFrom('none', 'malformed', 'unknown')),
        route: fc.constantFrom(...(Object.keys(ROUTES) as RouteName[])),
        encounter: fc.oneof(fc.nat(4), fc.constant('unknown')),
        document: fc.oneof(fc.nat(1), fc.constant('unknown')),
        extraQuery: fc.boolean(),
      }),
      { minLength: 4, maxLength: 12 },
    ),
  })
  .map((w) => ({
    ...w,
    encounters: w.encounters.map((e) => ({ ...e, org: e.org % w.orgs.length })),
    keys: w.keys.map((k) => ({ ...k, org: k.org % w.orgs.length })) as KeyModel[],
  }));

type Prediction = { status: number; code?: string };

/** The contract's rules, in the contract's order (decisions.md for what the contract leaves open). */
function predict(
  world: { orgs: OrgModel[]; encounters: EncounterModel[]; keys: KeyModel[] },
  req: RequestModel,
): Prediction {
  if (req.key === 'none') return { status: 401, code: 'missing_bearer' };
  if (req.key === 'malformed') return { status: 401, code: 'malformed_token' };
  if (req.key === 'unknown') return { status: 401, code: 'invalid_key' };
  const key = world.keys[req.key % world.keys.length]!;
  if (key.environment === 'test') return { status: 401, code: 'test_prefix_not_allowed' };
  if (key.state === 'revoked') return { status: 401, code: 'revoked_key' };
  if (key.state === 'disabled') return { status: 401, code: 'disabled_key' };
  if (key.expired) return { status: 401, code: 'expired_key' };
  const org = world.orgs[key.org]!;
  if (!org.apiKeysEnabled) return { status: 401, code: 'api_keys_disabled' };
  if (key.kind !== 'organization') return { status: 403, code: 'org_scope_only_required' };
  const route = ROUTES[req.route];
  if (!org.allowlisted) return { status: 403, code: 'organization_not_allowlisted' };
  if (!org.routes.includes(route.group)) return { status: 403, code: 'route_not_allowed' };
  if (route.scopes.some((s) => !key.scopes.includes(s))) return { status: 403, code: 'missing_scope' };
  if (req.extraQuery) return { status: 400, code: 'unsupported_filter' };
  if (req.route === 'list') return { status: 200 };
  if (req.encounter === 'unknown') return { status: 404, code: 'encounter_not_found' };
  const encounter = world.encounters[req.encounter % world.encounters.length]!;
  if (encounter.org !== key.org) return { status: 403, code: 'cross_organization_denied' };
  if (encounter.demo) return { status: 403, code: 'demo_training_denied' };
  if (req.route === 'encounter') return { status: 200 };
  if (req.document === 'unknown') return { status: 404, code: 'document_not_found' };
  const doc = encounter.docs[req.document % encounter.docs.length]!;
  if (req.route === 'document')
    return doc.type === 'internal' ? { status: 400, code: 'unsupported_document_type' } : { status: 200 };
  if (doc.type !== 'ambient_transcript') return { status: 400, code: 'unsupported_document_type' };
  if (req.route === 'transcript')
    return doc.finalized ? { status: 200 } : { status: 404, code: 'transcript_not_found' };
  return { status: 400, code: 'audio_not_available_for_document' };
}

/** Every organization_id, encounter_id and document_id anywhere in a body. */
function idsIn(
  value: unknown,
  out: { orgs: Set<string>; ids: Set<string> } = { orgs: new Set(), ids: new Set() },
) {
  if (Array.isArray(value)) for (const v of value) idsIn(v, out);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === 'organization_id' && typeof v === 'string') out.orgs.add(v);
      else if ((k === 'encounter_id' || k === 'document_id' || k === 'patient_id') && typeof v === 'string')
        out.ids.add(v);
      else idsIn(v, out);
    }
  }
  return out;
}

forEachStore('isolation property', (kind) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer(kind);
  });
  after(() => server.close());

  test('security: answers follow the reference model and never cross organizations', async () => {
    const now = Date.now();
    await fc.assert(
      fc.asyncProperty(worldArb, async (world) => {
        const f = server.fixtures;
        const orgIds = await Promise.all(world.orgs.map((o) => f.organization(o)));
        const owned = new Map<string, string>();
        const encounterIds: string[] = [];
        const documentIds: string[][] = [];
        for (const e of world.encounters) {
          const org = orgIds[e.org]!;
          const id = await f.encounter(org, { demoTraining: e.demo });
          owned.set(id, org);
          encounterIds.push(id);
          const docs: string[] = [];
          for (const d of e.docs) {
            const docId = await f.document(org, id, {
              schemaType: d.type === 'internal' ? 'internal_summary' : d.type,
              transcript: d.type === 'ambient_transcript' ? { finalized: d.finalized } : undefined,
            });
            owned.set(docId, org);
            docs.push(docId);
          }
          documentIds.push(docs);
        }
        const tokens = await Promise.all(
          world.keys.map(
            async (k) =>
              (
                await f.key(orgIds[k.org]!, {
                  scopes: k.scopes,
                  kind: k.kind,
                  state: k.state,
                  expiresAt: k.expired ? now - 60_000 : null,
                  environment: k.environment,
                })
              ).token,
          ),
        );
        for (const req of world.requests) {
          const e = req.encounter === 'unknown' ? undefined : req.encounter % encounterIds.length;
          const encounterId = e === undefined ? 'enc_unknown' : encounterIds[e]!;
          const docs = e === undefined ? [] : documentIds[e]!;
          const documentId =
            req.document === 'unknown' || docs.length === 0
              ? 'doc_unknown'
              : docs[req.document % docs.length]!;
          const base = `/external/v1/encounters/${encounterId}`;
          const path = {
            list: '/external/v1/encounters',
            encounter: base,
            document: `${base}/documents/${documentId}`,
            transcript: `${base}/documents/${documentId}/transcript`,
            audio: `${base}/documents/${documentId}/audio`,
          }[req.route];
          const token =
            req.key === 'none'
              ? undefined
              : req.key === 'malformed'
                ? 'eds_live_not-a-real-key'
                : req.key === 'unknown'
                  ? generateToken('live')
                  : tokens[req.key % tokens.length];
          const r = await server.api.get(
            `${path}${req.extraQuery ? '?owners=all' : ''}`,
            token === undefined ? {} : { token },
          );
          const expected = predict(world, req);
          assert.equal(
            `${r.status} ${r.body?.reason_code ?? ''}`.trim(),
            `${expected.status} ${expected.code ?? ''}`.trim(),
            `${req.route} ${JSON.stringify(req)}`,
          );
          if (r.status === 200 && typeof req.key === 'number') {
            const callerOrg = orgIds[world.keys[req.key % world.keys.length]!.org]!;
            const found = idsIn(r.body);
            for (const org of found.orgs)
              assert.equal(org, callerOrg, 'organization_id of another organization');
            for (const id of found.ids)
              if (owned.has(id)) assert.equal(owned.get(id), callerOrg, `${id} belongs elsewhere`);
            if (req.route === 'list') {
              const listable = world.encounters.filter((x) => orgIds[x.org] === callerOrg && !x.demo).length;
              assert.ok(
                r.body.items.every((item: { organization_id: string }) => item.organization_id === callerOrg),
              );
              assert.equal(r.body.total, listable, "total counts exactly the caller's listable encounters");
            }
          }
        }
      }),
      { numRuns: kind === 'sqlite' ? 30 : 15, seed: 20261122 },
    );
  });
});
