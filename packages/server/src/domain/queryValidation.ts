/**
 * Query values checked against the route's TypeBox query schema (the one its OpenAPI entry
 * shows), compiled once per route. The contract's order: unsupported keys first, then each
 * parameter in the schema's order, then the route's rule across parameters (decisions.md). A key
 * given twice is invalid for its own code. Messages are made from the schema's own bounds.
 */
import type { Static, TObject, TSchema } from 'typebox';
import type { ReasonCode } from '../contract/reasons.js';
import { schemaCheck } from '../schemaChecks.js';
import { ApiError } from './errors.js';
import { useContractFormats } from './schemaFormats.js';

export type RawQuery = Record<string, string | string[] | undefined>;

export interface QueryRules<S extends TObject> {
  /** The reason code a bad value of each parameter answers with. */
  readonly reasons: { readonly [K in keyof S['properties']]: ReasonCode };
  /** A rule across parameters, checked once each has passed its own. */
  readonly across?: (values: Static<S>) => void;
}

/** Returns the query's values, defaults filled in, or throws the contract's ApiError. */
export type QueryValidator = (query: RawQuery, url: string) => Record<string, unknown>;

interface Parameter {
  readonly name: string;
  readonly reason: ReasonCode;
  readonly message: string;
  readonly fallback: unknown;
  /** The value the text stands for, or `invalid`. */
  read(text: string): unknown;
}

const invalid = Symbol('invalid');
const CANONICAL_INTEGER = /^(0|[1-9][0-9]*)$/;
const NO_VALUES: Readonly<Record<string, unknown>> = Object.freeze({});

export function compileQuery<S extends TObject>(schema: S, rules?: QueryRules<S>): QueryValidator {
  useContractFormats();
  const parameters: Parameter[] = Object.entries(schema.properties as Record<string, TSchema>).map(
    ([name, property]) => {
      const reason = (rules?.reasons as Record<string, ReasonCode> | undefined)?.[name];
      if (reason === undefined) throw new Error(`query parameter ${name} has no reason code`);
      return parameter(name, property, reason);
    },
  );
  const accepted = new Set(parameters.map((p) => p.name));
  const across = rules?.across as ((values: Record<string, unknown>) => void) | undefined;

  return (query, url) => {
    for (const key in query) if (!accepted.has(key)) rejectUnsupportedKeys(accepted, keysAsSent(url, query));
    if (parameters.length === 0) return NO_VALUES;
    const values: Record<string, unknown> = {};
    for (const p of parameters) {
      const raw = query[p.name];
      if (raw === undefined) {
        if (p.fallback !== undefined) values[p.name] = p.fallback;
        continue;
      }
      const value = typeof raw === 'string' ? p.read(raw) : invalid;
      if (value === invalid) throw new ApiError(p.reason, p.message, undefined, p.name);
      values[p.name] = value;
    }
    across?.(values);
    return values;
  };
}

function parameter(name: string, property: TSchema, reason: ReasonCode): Parameter {
  const schema = property as TSchema & Record<string, unknown>;
  const check = schemaCheck(property);
  // A query value is text; an integer parameter is read from its canonical decimal form only.
  const fromText =
    schema.type === 'integer'
      ? (text: string) => (CANONICAL_INTEGER.test(text) ? Number(text) : invalid)
      : (text: string) => text;
  return {
    name,
    reason,
    message: messageFor(name, schema),
    fallback: schema.default,
    read(text) {
      const value = fromText(text);
      return value !== invalid && check(value) ? value : invalid;
    },
  };
}

function messageFor(name: string, schema: Record<string, unknown>): string {
  if (schema.type === 'integer') {
    return `${name} must be a whole number from ${schema.minimum} to ${schema.maximum}, given once.`;
  }
  if (Array.isArray(schema.enum)) return `${name} must be ${schema.enum.join(' or ')}, given once.`;
  if (schema.format === 'date-time') {
    return `${name} must be an RFC 3339 date-time with an offset (e.g. 2026-05-01T00:00:00Z), given once.`;
  }
  throw new Error(`query parameter ${name} has a type with no message`);
}

/** The first key the route does not take decides, and is the problem's `field`. */
function rejectUnsupportedKeys(accepted: ReadonlySet<string>, keys: readonly string[]): never {
  const key = keys.find((k) => !accepted.has(k)) as string;
  throw new ApiError(
    'unsupported_filter',
    `This route does not accept the query parameter "${printable(key)}".`,
    undefined,
    key,
  );
}

/**
 * The parsed query's keys in the order the request target gives them: a parsed object lists
 * integer-like keys (`?page=2&5=1`) first, whatever their place. Only read for a refusal.
 */
function keysAsSent(url: string, query: RawQuery): string[] {
  const q = url.indexOf('?');
  const position = new Map<string, number>();
  let index = 0;
  for (const key of new URLSearchParams(q === -1 ? '' : url.slice(q + 1)).keys()) {
    if (!position.has(key)) position.set(key, index);
    index++;
  }
  const at = (key: string) => position.get(key) ?? index;
  return Object.keys(query).sort((a, b) => at(a) - at(b));
}

/** Query keys are echoed in details; keep them short and printable. */
function printable(text: string): string {
  const clean = text.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > 40 ? `${clean.slice(0, 40)}…` : clean;
}
