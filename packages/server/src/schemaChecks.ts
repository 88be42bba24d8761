/**
 * Values checked against the service's TypeBox schemas: query parameters, settings and import
 * fields. Ajv compiles the checks; Fastify's serializers load it in `eds serve` anyway, where
 * TypeBox's own compiler added some 300 modules and 1.8 MB of heap for the same checks.
 * TypeBox's markers (`~kind`, `~optional`) are not enumerable, so Ajv never sees them; the
 * service's own annotations are declared as keywords, and any other unknown keyword or format is
 * refused when a schema is compiled (test/schemaChecks.test.ts compiles every schema).
 */
import { Ajv } from 'ajv';

/** Keywords the service's schemas carry for people and for their callers, not for the check. */
const ANNOTATIONS = [
  // settings (config/settings.ts)
  'defaultText',
  'secret',
  'fileForm',
  'appliesWhen',
  'requiredWhenApplies',
  'textForm',
  // import fields (ingest/recordSchemas.ts)
  'expected',
  'byRule',
  'onlyFor',
];

const ajv = new Ajv({ strict: true, keywords: ANNOTATIONS, allowUnionTypes: true });

export type ValueCheck = (value: unknown) => boolean;

export function schemaCheck(schema: object): ValueCheck {
  const validate = ajv.compile(schema);
  return (value) => validate(value) as boolean;
}

/** A string format a schema may name; defined before the first schema that names it is compiled. */
export function defineStringFormat(name: string, check: (text: string) => boolean): void {
  ajv.addFormat(name, { type: 'string', validate: check });
}
