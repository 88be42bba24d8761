/**
 * A partner's generated client: TypeScript types made by openapi-typescript from the document
 * this server serves, a small client written against them and type-checked by tsc in strict
 * mode, then run against the server. Mistakes a generated client should catch at compile time
 * (a misspelt schema_type, content read without narrowing, a reason code that does not exist)
 * must fail to compile.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import ts from 'typescript';
import { useServerWithWorld } from '../support/serverWithWorld.js';

let dir: string;
const given = useServerWithWorld('sqlite', {}, async ({ server }) => {
  dir = mkdtempSync(join(tmpdir(), 'eds-generated-client-'));
  const document = (await (await fetch(`${server.url}/openapi/v1/openapi.json`)).json()) as OpenAPI3;
  writeFileSync(join(dir, 'api.ts'), astToString(await openapiTS(document)));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** The client a partner would write: plain fetch, typed only by the generated `paths`. */
const CLIENT = `
import type { components, paths } from './api.js';

type Json<P extends keyof paths, S extends number> = paths[P]['get'] extends {
  responses: { [K in S]: { content: { 'application/json': infer T } } };
}
  ? T
  : never;
export type Problem = components['schemas']['Problem'];
export type DocumentDetail = components['schemas']['DocumentDetail'];
type Route = keyof paths;

async function get<T>(baseUrl: string, key: string, path: string): Promise<T> {
  const answer = await fetch(baseUrl + path, { headers: { Authorization: 'Bearer ' + key } });
  if (!answer.ok) {
    const problem = (await answer.json()) as Problem;
    throw new Error(problem.reason_code + ': ' + problem.detail);
  }
  return (await answer.json()) as T;
}

export async function firstPage(baseUrl: string, key: string) {
  const path: Route = '/external/v1/encounters';
  return get<Json<'/external/v1/encounters', 200>>(baseUrl, key, path + '?limit=2&sort_order=asc');
}

export async function documentText(baseUrl: string, key: string, encounterId: string, documentId: string) {
  const { document } = await get<Json<'/external/v1/encounters/{encounter_id}/documents/{document_id}', 200>>(
    baseUrl,
    key,
    '/external/v1/encounters/' + encounterId + '/documents/' + documentId,
  );
  // The document detail is a union on schema_type: only a "document" has content.
  return document.schema_type === 'document' ? document.content.text : null;
}

export function isRetryable(problem: Problem): boolean {
  return problem.reason_code === 'rate_limited' || problem.reason_code === 'digest_key_unavailable';
}
`;

const STRICT: ts.CompilerOptions = {
  strict: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  skipLibCheck: false,
  noEmit: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
  types: [],
};

/** Mistakes a partner could make, each in a file of its own. */
const MISTAKES = {
  'typo.ts': `import type { DocumentDetail } from './client.js';
export const isNote = (d: DocumentDetail) => d.schema_type === 'documnet';`,
  'unchecked.ts': `import type { DocumentDetail } from './client.js';
export const text = (d: DocumentDetail) => d.content.text;`,
  'code.ts': `import type { Problem } from './client.js';
export const gone = (p: Problem) => p.reason_code === 'key_revoked';`,
};

/**
 * tsc over the scratch project, in a worker thread: a program over the generated types takes
 * seconds, and on this thread it would hold up the server's own timers (keep-alive, request
 * timeouts) and then let them all fire at once, as no running server ever sees.
 */
const TYPECHECK = `
const { parentPort, workerData } = require('node:worker_threads');
const { basename } = require('node:path');
const ts = require('typescript');
const program = ts.createProgram(workerData.files, workerData.options);
parentPort.postMessage(
  ts.getPreEmitDiagnostics(program).map((d) => [
    d.file ? basename(d.file.fileName) : '(options)',
    ts.flattenDiagnosticMessageText(d.messageText, '\\n'),
  ]),
);
`;

let diagnostics: Promise<Map<string, string[]>> | undefined;
/** tsc's messages for one file of the scratch project (one program checks them all, once). */
async function errorsIn(name: string): Promise<string[]> {
  diagnostics ??= typecheck();
  const found = await diagnostics;
  return [...(found.get(name) ?? []), ...(found.get('(options)') ?? [])];
}

async function typecheck(): Promise<Map<string, string[]>> {
  const files: Record<string, string> = { 'client.ts': CLIENT, ...MISTAKES };
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
  const worker = new Worker(TYPECHECK, {
    eval: true,
    workerData: { files: Object.keys(files).map((file) => join(dir, file)), options: STRICT },
  });
  const [messages] = (await once(worker, 'message')) as [[string, string][]];
  const found = new Map<string, string[]>();
  for (const [file, message] of messages) found.set(file, [...(found.get(file) ?? []), message]);
  return found;
}

test('happy: a client written against the generated types type-checks under strict settings', async () => {
  assert.deepEqual(await errorsIn('client.ts'), []);
  assert.deepEqual(await errorsIn('api.ts'), []);
});

test('happy: the type-checked client makes working calls to this server', async () => {
  const source = ts.transpileModule(CLIENT, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  }).outputText;
  const file = join(dir, 'client.mjs');
  // `import type` leaves nothing behind: the client runs without the types.
  writeFileSync(file, source);
  const client = await import(pathToFileURL(file).href);
  const page = await client.firstPage(given.server.url, given.world.token);
  assert.equal(page.limit, 2);
  assert.ok(page.items.length > 0);
  const text = await client.documentText(
    given.server.url,
    given.world.token,
    given.world.encounter,
    given.world.note,
  );
  assert.equal(typeof text, 'string');
  assert.equal(
    await client.documentText(
      given.server.url,
      given.world.token,
      given.world.encounter,
      given.world.ambient,
    ),
    null,
  );
  await assert.rejects(client.firstPage(given.server.url, 'eds_live_not-a-key'), /^Error: malformed_token: /);
});

test('error: a misspelt schema_type does not compile', async () => {
  const errors = await errorsIn('typo.ts');
  assert.ok(
    errors.some((e) => /no overlap/.test(e)),
    errors.join('\n'),
  );
});

test('error: content read from a document detail without checking schema_type does not compile', async () => {
  const errors = await errorsIn('unchecked.ts');
  assert.ok(
    errors.some((e) => /Property 'content' does not exist/.test(e)),
    errors.join('\n'),
  );
});

test('error: a reason code the service never sends does not compile', async () => {
  const errors = await errorsIn('code.ts');
  assert.ok(
    errors.some((e) => /no overlap/.test(e)),
    errors.join('\n'),
  );
});
