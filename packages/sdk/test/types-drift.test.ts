/**
 * The SDK's types against the OpenAPI document a real `eds demo --serve` process serves: for every component
 * and every route's 200 answer, the same property names, the same required/optional split,
 * the same nullability and JSON kinds, recursively; and the reason-code union equal to the
 * served enum. support/shapes.ts is bound to src/types.ts by the compiler (npm run typecheck).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { REASON_CODES } from '../src/index.js';
import { type DemoServer, startDemoServer } from './support/demoServer.js';
import { type Field, ROUTE_SHAPES, SDK_SHAPES, type Shape } from './support/shapes.js';

// biome-ignore lint/suspicious/noExplicitAny: an OpenAPI document is walked generically.
type Json = any;

let server: DemoServer;
let doc: Json;
before(async () => {
  server = await startDemoServer();
  doc = await (await fetch(`${server.url}/openapi/v1/openapi.json`)).json();
});
after(() => server.stop());

function resolve(schema: Json): Json {
  let s = schema;
  while (s?.$ref) {
    const path = String(s.$ref).replace(/^#\//, '').split('/');
    s = path.reduce(
      (node: Json, part: string) => node?.[part.replaceAll('~1', '/').replaceAll('~0', '~')],
      doc,
    );
  }
  return s;
}

/** An OpenAPI schema seen as a Field (kind, nullability, nested shape). */
function served(schemaIn: Json, optional = false): Field {
  let schema = resolve(schemaIn);
  let nullable = false;
  const variants: Json[] | undefined = schema.anyOf ?? schema.oneOf;
  if (variants?.every((v) => resolve(v).type === 'object')) {
    schema = mergedObject(variants.map(resolve));
  } else if (variants) {
    const resolved = variants.map(resolve);
    nullable = resolved.some((v) => v.type === 'null');
    const rest = resolved.filter((v) => v.type !== 'null');
    const kinds = new Set(rest.map((v) => v.type ?? typeof v.const));
    assert.equal(kinds.size, 1, `a union of several kinds: ${JSON.stringify(schema)}`);
    schema = rest.length === 1 ? rest[0] : { type: [...kinds][0] };
  }
  let kind = schema.type;
  if (Array.isArray(kind)) {
    nullable ||= kind.includes('null');
    kind = kind.filter((k: string) => k !== 'null')[0];
  }
  const field: Field = { kind, nullable, optional };
  if (kind === 'object') {
    const required = new Set<string>(schema.required ?? []);
    field.shape = Object.fromEntries(
      Object.entries(schema.properties ?? {}).map(([key, value]) => [key, served(value, !required.has(key))]),
    );
  }
  if (kind === 'array') field.items = served(schema.items);
  return field;
}

/**
 * Variants told apart by a field (the document detail) seen as one object: every property of
 * any variant, required only where every variant requires it.
 */
function mergedObject(variants: Json[]): Json {
  const properties = Object.assign({}, ...variants.map((v) => v.properties));
  const required = Object.keys(properties).filter((key) =>
    variants.every((v) => (v.required ?? []).includes(key)),
  );
  return { type: 'object', properties, required };
}

function differences(path: string, sdk: Field, api: Field, out: string[]): string[] {
  if (sdk.kind !== api.kind) out.push(`${path}: SDK ${sdk.kind}, OpenAPI ${api.kind}`);
  if (sdk.nullable !== api.nullable)
    out.push(`${path}: SDK nullable=${sdk.nullable}, OpenAPI nullable=${api.nullable}`);
  if (sdk.optional !== api.optional)
    out.push(`${path}: SDK optional=${sdk.optional}, OpenAPI optional=${api.optional}`);
  if (sdk.shape || api.shape) shapeDifferences(path, sdk.shape ?? {}, api.shape ?? {}, out);
  if (sdk.items && api.items) differences(`${path}[]`, sdk.items, api.items, out);
  return out;
}

function shapeDifferences(path: string, sdk: Shape, api: Shape, out: string[]): void {
  for (const key of new Set([...Object.keys(sdk), ...Object.keys(api)])) {
    const a = sdk[key];
    const b = api[key];
    if (!a) out.push(`${path}.${key}: served but missing from the SDK type`);
    else if (!b) out.push(`${path}.${key}: in the SDK type but not served`);
    else differences(`${path}.${key}`, a, b, out);
  }
}

const asObject = (shape: Shape): Field => ({ kind: 'object', nullable: false, optional: false, shape });

describe('SDK types vs the served OpenAPI document', () => {
  it('maps every served component, and nothing else', () => {
    assert.deepEqual(Object.keys(SDK_SHAPES).sort(), Object.keys(doc.components.schemas).sort());
  });

  it('every component has the same properties, required set, nullability and kinds', () => {
    const out: string[] = [];
    for (const [name, shape] of Object.entries(SDK_SHAPES)) {
      differences(name, asObject(shape), served(doc.components.schemas[name]), out);
    }
    assert.deepEqual(out, []);
  });

  it("every route's 200 answer is what the client method parses", () => {
    assert.deepEqual(
      Object.keys(doc.paths)
        .filter((p) => p.startsWith('/external/v1/'))
        .sort(),
      Object.keys(ROUTE_SHAPES).sort(),
    );
    const out: string[] = [];
    for (const [path, component] of Object.entries(ROUTE_SHAPES)) {
      const schema = doc.paths[path].get.responses['200'].content['application/json'].schema;
      differences(`${path} 200`, asObject(SDK_SHAPES[component]!), served(schema), out);
    }
    assert.deepEqual(out, []);
  });

  it('the ReasonCode union equals the served reason_code enum', () => {
    const schema = resolve(doc.components.schemas.Problem.properties.reason_code);
    const variants: Json[] =
      schema.anyOf ?? schema.oneOf ?? (schema.enum ?? []).map((v: string) => ({ const: v }));
    const servedCodes = variants.map((v) => resolve(v).const).sort();
    assert.deepEqual([...REASON_CODES].sort(), servedCodes);
  });

  it('the comparison notices a drift (self-check with a changed copy)', () => {
    const changed = structuredClone(SDK_SHAPES.DocumentSummary!);
    changed.status = { ...changed.status!, nullable: false };
    delete changed.title;
    const out = differences(
      'DocumentSummary',
      asObject(changed),
      served(doc.components.schemas.DocumentSummary),
      [],
    );
    assert.equal(out.length, 2, out.join('\n'));
  });
});
