/**
 * The served OpenAPI document: valid OpenAPI 3.1 by an independent validator, and complete —
 * every route with its scopes, parameters and constraints, its success schema, and every error
 * status it can return with exactly that route's reason codes.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { compileErrors, validate } from '@readme/openapi-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { LIST_QUERY } from '../../src/contract/listQuery.js';
import { REASON_CODES, REASONS, type ReasonCode, reasonsByStatusFor } from '../../src/contract/reasons.js';
import { ROUTE_LIST } from '../../src/contract/routes.js';
import { WEBHOOK_HEADERS } from '../../src/contract/webhook.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let doc: any;
before(async () => {
  server = await startTestServer('sqlite');
  const r = await fetch(`${server.url}/openapi/v1/openapi.json`);
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type') ?? '', /application\/json/);
  doc = await r.json();
});
after(() => server.close());

const openApiPath = (path: string) => path.replace(/:([a-z_]+)/g, '{$1}');

test('happy: the document is valid OpenAPI 3.1.0 by an independent validator', async () => {
  assert.equal(doc.openapi, '3.1.0');
  const result = await validate(structuredClone(doc));
  assert.ok(result.valid, result.valid ? '' : compileErrors(result));
});

test('happy: exactly the five contract routes, GET and HEAD only, bearer security on each', () => {
  assert.deepEqual(Object.keys(doc.paths).sort(), ROUTE_LIST.map((r) => openApiPath(r.path)).sort());
  assert.deepEqual(doc.components.securitySchemes.bearerAuth, {
    type: 'http',
    scheme: 'bearer',
    description: doc.components.securitySchemes.bearerAuth.description,
  });
  for (const route of ROUTE_LIST) {
    const item = doc.paths[openApiPath(route.path)];
    assert.deepEqual(Object.keys(item), ['get', 'head'], route.id);
    assert.deepEqual(item.get.security, [{ bearerAuth: [] }]);
    assert.equal(item.get.operationId, route.id);
    assert.equal(item.head.operationId, `${route.id}Head`);
    for (const scope of route.scopes)
      assert.ok(item.get.description.includes(scope), `${route.id} documents ${scope}`);
  }
});

test('happy: every error status of every route, with that route’s reason codes as an enum', () => {
  for (const route of ROUTE_LIST) {
    const responses = doc.paths[openApiPath(route.path)].get.responses;
    const expected = reasonsByStatusFor(route.id);
    const notModified = route.id === 'getAudio' ? [] : ['304'];
    assert.deepEqual(
      Object.keys(responses).sort(),
      ['200', ...notModified, ...[...expected.keys()].map(String)].sort(),
      route.id,
    );
    for (const [status, codes] of expected) {
      const schema = responses[status].content['application/problem+json'].schema;
      assert.equal(schema.allOf[0].$ref, '#/components/schemas/Problem', `${route.id} ${status}`);
      assert.deepEqual(schema.allOf[1].properties.reason_code.enum, codes, `${route.id} ${status}`);
      assert.deepEqual([...doc.components.schemas.Problem.required].sort(), [
        'detail',
        'field',
        'message',
        'reason_code',
        'request_id',
        'status',
        'title',
        'type',
      ]);
    }
  }
});

test('happy: the Problem schema lists every reason code, the media host’s and service_unavailable included', () => {
  const problem = doc.components.schemas.Problem;
  assert.deepEqual(problem.properties.reason_code.enum, REASON_CODES);
  for (const code of ['link_invalid', 'link_expired', 'range_not_satisfiable', 'service_unavailable']) {
    assert.ok(problem.properties.reason_code.enum.includes(code), code);
  }
  assert.equal(problem.properties.message.type, 'string');
  assert.deepEqual(
    problem.properties.field.anyOf.map((s: { type: string }) => s.type),
    ['string', 'null'],
    'field is a string or null, always present',
  );
  assert.ok(problem.required.includes('field'));
});

test('happy: every route documents 503 service_unavailable; no route documents a code only the media host sends', () => {
  for (const route of ROUTE_LIST) {
    const responses = doc.paths[openApiPath(route.path)].get.responses;
    const enums: string[] = Object.values(responses).flatMap(
      (r) =>
        (
          r as {
            content?: Record<
              string,
              { schema: { allOf: { properties: { reason_code: { enum: string[] } } }[] } }
            >;
          }
        ).content?.['application/problem+json']?.schema.allOf[1]?.properties.reason_code.enum ?? [],
    );
    assert.ok(enums.includes('service_unavailable'), route.id);
    assert.ok(
      (responses['503'] as { headers?: Record<string, unknown> }).headers?.['Retry-After'],
      `${route.id}: a 503 says when to try again`,
    );
    for (const code of enums)
      assert.notEqual(REASONS[code as ReasonCode].hosts, 'media', `${route.id} ${code}`);
  }
});

test('happy: list parameters carry their constraints; path parameters are required strings', () => {
  const list = doc.paths['/external/v1/encounters'].get;
  const byName = Object.fromEntries(
    list.parameters.filter((p: any) => p.in === 'query').map((p: any) => [p.name, p]),
  );
  assert.deepEqual(Object.keys(byName).sort(), ['end_at', 'limit', 'offset', 'sort_order', 'start_at']);
  assert.equal(byName.limit.in, 'query');
  assert.equal(byName.limit.schema.minimum, LIST_QUERY.limit.min);
  assert.equal(byName.limit.schema.maximum, LIST_QUERY.limit.max);
  assert.equal(byName.limit.schema.default, LIST_QUERY.limit.default);
  assert.equal(byName.offset.schema.maximum, LIST_QUERY.offset.max);
  assert.equal(byName.start_at.schema.format, 'date-time');
  const detail = doc.paths['/external/v1/encounters/{encounter_id}/documents/{document_id}'].get;
  for (const p of detail.parameters.filter((p: any) => p.in !== 'header')) {
    assert.equal(p.in, 'path');
    assert.equal(p.required, true);
    assert.equal(p.schema.type, 'string');
  }
});

test('happy: routes 1-4 document ETag on 200, If-None-Match, and 304 Not Modified; the audio link none', () => {
  for (const route of ROUTE_LIST) {
    const operation = doc.paths[openApiPath(route.path)].get;
    const header = operation.parameters.find(
      (p: any) => p.in === 'header' && /^if-none-match$/i.test(p.name),
    );
    const etag = operation.responses['200'].headers?.ETag;
    if (route.id === 'getAudio') {
      assert.equal(header, undefined, route.id);
      assert.equal(etag, undefined, route.id);
      assert.equal(operation.responses['304'], undefined, route.id);
      continue;
    }
    assert.equal(header?.required, false, route.id);
    assert.equal(etag?.schema.type, 'string', route.id);
    assert.equal(operation.responses['304'].headers.ETag.schema.type, 'string', route.id);
    assert.equal(operation.responses['304'].content, undefined, `${route.id}: a 304 has no body`);
  }
});

test('happy: response schemas are closed (no field outside the contract) and nullable fields are explicit', () => {
  const encounter = doc.components.schemas.Encounter;
  assert.equal(encounter.additionalProperties, false);
  assert.equal(encounter.properties.documents.items.$ref, '#/components/schemas/DocumentSummary');
  const summary = doc.components.schemas.DocumentSummary;
  assert.deepEqual(
    summary.properties.status.anyOf.map((s: any) => s.type),
    ['string', 'null'],
  );
  assert.deepEqual(summary.required.sort(), [
    'audio_duration_seconds',
    'document_id',
    'schema_type',
    'status',
    'title',
    'workflow_variant',
  ]);
});

test('happy: a document detail is one of two named shapes told apart by schema_type; content only on document', () => {
  const { DocumentDetail, NoteDetail, AmbientTranscriptDetail } = doc.components.schemas;
  assert.deepEqual(
    DocumentDetail.oneOf.map((s: { $ref: string }) => s.$ref),
    ['#/components/schemas/NoteDetail', '#/components/schemas/AmbientTranscriptDetail'],
  );
  assert.equal(DocumentDetail.discriminator.propertyName, 'schema_type');
  assert.deepEqual(NoteDetail.properties.schema_type.enum, ['document']);
  assert.ok(NoteDetail.required.includes('content'));
  assert.equal(NoteDetail.properties.content.$ref, '#/components/schemas/DocumentContent');
  assert.deepEqual(AmbientTranscriptDetail.properties.schema_type.enum, ['ambient_transcript']);
  assert.equal(AmbientTranscriptDetail.properties.content, undefined);
  assert.equal(AmbientTranscriptDetail.additionalProperties, false);
});

test('happy: closed sets are enums: schema_type, content format, webhook type, reason codes', () => {
  const { DocumentSummary, DocumentContent, WebhookEvent, Problem } = doc.components.schemas;
  assert.deepEqual(DocumentSummary.properties.schema_type.enum, ['document', 'ambient_transcript']);
  assert.deepEqual(DocumentContent.properties.format.enum, ['markdown']);
  assert.deepEqual(WebhookEvent.properties.type.enum, ['recording.transcript_ready']);
  assert.ok(Problem.properties.reason_code.enum.includes('revoked_key'));
});

/** Every `$ref` in a part of the document. */
function refsIn(value: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) refsIn(item, found);
  else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$ref' && typeof inner === 'string') found.add(inner);
      else refsIn(inner, found);
    }
  }
  return found;
}

test('happy: every component is referenced, and no component nests an object of its own (generators name every class)', () => {
  const { components, ...rest } = doc;
  const used = refsIn(rest);
  // Follow references from referenced components until nothing new turns up.
  for (let size = -1; size !== used.size; ) {
    size = used.size;
    for (const ref of [...used]) refsIn(doc.components.schemas[ref.split('/').pop()!], used);
  }
  for (const name of Object.keys(components.schemas)) {
    assert.ok(used.has(`#/components/schemas/${name}`), `${name} is referenced`);
    const schema = components.schemas[name];
    for (const [field, property] of Object.entries<any>(schema.properties ?? {})) {
      const inner = property.type === 'array' ? property.items : property;
      assert.notEqual(inner.type, 'object', `${name}.${field} is a named component, not an inline object`);
    }
  }
});

test('happy: every answer of every operation describes X-Request-Id, Cache-Control and the deprecation fields', () => {
  for (const route of ROUTE_LIST) {
    const item = doc.paths[openApiPath(route.path)];
    for (const method of ['get', 'head']) {
      for (const [status, response] of Object.entries<any>(item[method].responses)) {
        const where = `${method} ${route.id} ${status}`;
        for (const name of ['X-Request-Id', 'Cache-Control', 'Deprecation', 'Sunset', 'Link']) {
          assert.ok(response.headers?.[name], `${where} describes ${name}`);
        }
        assert.deepEqual(response.headers['Cache-Control'].schema.enum, ['no-store'], where);
        if (method === 'head') assert.equal(response.content, undefined, `${where}: HEAD has no body`);
      }
    }
  }
});

test('happy: the document names its contact and its license', () => {
  assert.equal(doc.info.contact.url, `${server.config.publicBaseUrl}/docs`);
  assert.equal(doc.info.license.identifier, 'MIT');
});

/** Validates `value` against the schema at a JSON pointer into the served document. */
function schemaCheck() {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (a: unknown) => void)(ajv);
  ajv.addSchema(doc, 'openapi.json');
  return (pointer: string, value: unknown) => {
    const check = ajv.compile({ $ref: `openapi.json#${pointer}` });
    assert.ok(check(value), `${pointer}: ${JSON.stringify(check.errors)}`);
  };
}
const escapePointer = (part: string) => part.replaceAll('~', '~0').replaceAll('/', '~1');

test('happy: every 200 and every problem shows an example that its own schema accepts', () => {
  const check = schemaCheck();
  for (const route of ROUTE_LIST) {
    const path = openApiPath(route.path);
    const base = `/paths/${escapePointer(path)}/get/responses`;
    const responses = doc.paths[path].get.responses;
    const ok = responses['200'].content['application/json'];
    assert.ok(ok.example, `${route.id} 200 has an example`);
    check(`${base}/200/content/application~1json/schema`, ok.example);
    for (const [status, codes] of reasonsByStatusFor(route.id)) {
      const problem = responses[status].content['application/problem+json'];
      assert.deepEqual(Object.keys(problem.examples), codes, `${route.id} ${status}: one example per code`);
      for (const code of codes) {
        const example = problem.examples[code].value;
        assert.equal(example.reason_code, code);
        assert.equal(example.status, status);
        assert.ok(example.detail.length > 0);
        check(`${base}/${status}/content/application~1problem+json/schema`, example);
      }
    }
  }
});

test('happy: sort_order is a plain string enum, so the reference lists asc and desc', () => {
  const list = doc.paths['/external/v1/encounters'].get;
  const sort = list.parameters.find((p: { name: string }) => p.name === 'sort_order');
  assert.equal(sort.schema.type, 'string');
  assert.deepEqual(sort.schema.enum, [...LIST_QUERY.sortOrders]);
  assert.equal(sort.schema.default, LIST_QUERY.defaultSort);
  assert.equal(sort.schema.anyOf, undefined);
});

test('happy: the recording.transcript_ready webhook is described: body, the five headers, verification, retries', () => {
  const hook = doc.webhooks['recording.transcript_ready'].post;
  const body = hook.requestBody.content['application/json'];
  assert.equal(body.schema.$ref, '#/components/schemas/WebhookEvent');
  schemaCheck()('/components/schemas/WebhookEvent', body.example);
  const headers: { name: string; required: boolean }[] = hook.parameters.filter(
    (p: { in: string }) => p.in === 'header',
  );
  assert.deepEqual(
    headers.map((p) => p.name),
    Object.values(WEBHOOK_HEADERS).map((name) => `Eds-${name}`),
  );
  for (const header of headers) assert.equal(header.required, true);
  assert.match(hook.description, /HMAC-SHA256/);
  assert.match(hook.description, /300 s/);
  assert.match(hook.description, /Retries/);
  assert.match(hook.description, /verifyWebhook/);
  assert.ok(doc.tags.some((t: { name: string }) => t.name === 'webhooks'));
});
