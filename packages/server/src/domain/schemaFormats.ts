/**
 * String formats as the contract reads them, for every schema check the service compiles:
 * `date-time` is RFC 3339 with an offset as time.ts parses it (impossible dates refused), `date`
 * a calendar date YYYY-MM-DD, and `record-id` an imported ID: 1 to 255 UTF-16 code units (what
 * the store keeps) with no control characters. A schema documented as `date-time` must validate
 * exactly as the stored value is later parsed.
 */
import { defineStringFormat } from '../schemaChecks.js';
import { isCalendarDate, parseRfc3339 } from '../time.js';

let registered = false;

export function useContractFormats(): void {
  if (registered) return;
  defineStringFormat('date-time', (value) => parseRfc3339(value) !== undefined);
  defineStringFormat('date', (value) => isCalendarDate(value));
  defineStringFormat(
    'record-id',
    (value) => value.length >= 1 && value.length <= 255 && !hasControlCharacter(value),
  );
  registered = true;
}

function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}
