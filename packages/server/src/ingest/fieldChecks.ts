/**
 * Checks one object of an import line against its record schema, noting every problem instead
 * of stopping at the first, so one run reports all that is wrong with a line: first the fields
 * the schema does not name (in the line's order), then each field in the schema's order.
 */
import Type, { type TObject } from 'typebox';
import { useContractFormats } from '../domain/schemaFormats.js';
import { schemaCheck, type ValueCheck } from '../schemaChecks.js';
import type { FieldSchema } from './recordSchemas.js';

export type JsonObject = Record<string, unknown>;

export class LineProblems {
  readonly found: string[] = [];

  fail(message: string): void {
    this.found.push(message);
  }

  /** `NAME must be EXPECTED (got VALUE)`, the form of every field refusal. */
  bad(label: string, expected: string, value: unknown): void {
    this.fail(`${label} must be ${expected} (got ${describe(value)})`);
  }
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function describe(value: unknown): string {
  if (value === undefined) return 'missing';
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** A field of a record schema, with the keywords the checks read. */
export function fieldOf(schema: TObject, name: string): FieldSchema | undefined {
  return (schema.properties as unknown as Record<string, FieldSchema>)[name];
}

/** Fields the line has that none of `schemas` names. */
export function refuseUnknownFields(
  object: JsonObject,
  schemas: readonly TObject[],
  prefix: string,
  problems: LineProblems,
): void {
  for (const key of Object.keys(object)) {
    if (!schemas.some((schema) => Object.hasOwn(schema.properties, key))) {
      problems.fail(`unknown field ${prefix}${key}`);
    }
  }
}

/** Checks of the fields marked `byRule`, run in their place among the others. */
export type FieldRules = Readonly<Record<string, (value: unknown) => void>>;

/** Each field of `schema`: present when required and valid, or checked by its rule. */
export function checkFields(
  schema: TObject,
  object: JsonObject,
  prefix: string,
  problems: LineProblems,
  rules: FieldRules = {},
): void {
  for (const [name, field] of fieldsOf(schema)) {
    if (field.schema.byRule) rules[name]?.(object[name]);
    else check(name, field, object[name], prefix, problems, false);
  }
}

/** One field's value against its schema, where a rule has decided the field applies; true when good. */
export function checkField(
  schema: TObject,
  name: string,
  value: unknown,
  prefix: string,
  problems: LineProblems,
  required = false,
): boolean {
  const field = fieldsOf(schema).find(([fieldName]) => fieldName === name)?.[1];
  if (!field) throw new Error(`the record schema has no field ${name}`);
  return check(name, field, value, prefix, problems, required);
}

function check(
  name: string,
  field: CompiledField,
  value: unknown,
  prefix: string,
  problems: LineProblems,
  required: boolean,
): boolean {
  if (value === undefined && field.optional && !required) return true;
  if (field.validator(value)) return true;
  problems.bad(`${prefix}${name}`, field.schema.expected, value);
  return false;
}

interface CompiledField {
  readonly schema: FieldSchema;
  readonly optional: boolean;
  readonly validator: ValueCheck;
}

const compiled = new WeakMap<TObject, [string, CompiledField][]>();

function fieldsOf(schema: TObject): [string, CompiledField][] {
  let fields = compiled.get(schema);
  if (!fields) {
    useContractFormats();
    fields = Object.entries(schema.properties as unknown as Record<string, FieldSchema>)
      .filter(([, field]) => field.expected !== undefined)
      .map(([name, field]) => [
        name,
        {
          schema: field,
          optional: Type.IsOptional(field),
          validator: schemaCheck(field),
        },
      ]);
    compiled.set(schema, fields);
  }
  return fields;
}
