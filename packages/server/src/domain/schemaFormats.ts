/**
 * String formats as the contract reads them, for every TypeBox check the service compiles:
 * `date-time` is RFC 3339 with an offset as time.ts parses it (impossible dates refused), and
 * `date` a calendar date YYYY-MM-DD. TypeBox's own checks differ at the edges, so a schema
 * documented as `date-time` must validate exactly as the stored value is later parsed.
 */
import Format from 'typebox/format';
import { isCalendarDate, parseRfc3339 } from '../time.js';

let registered = false;

export function useContractFormats(): void {
  if (registered) return;
  Format.Set('date-time', (value) => parseRfc3339(value) !== undefined);
  Format.Set('date', (value) => isCalendarDate(value));
  registered = true;
}
