/**
 * Times: stored as epoch milliseconds; written out as `YYYY-MM-DDTHH:MM:SS.sssZ`
 * (decisions.md, Responses); read in as RFC 3339 with `Z` or a `±HH:MM` offset.
 */
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|([+-])(\d{2}):(\d{2}))$/;

export function toIso(ms: number): string {
  return new Date(ms).toISOString();
}

export interface ParsedInstant {
  /** Whole milliseconds, floored. */
  readonly ms: number;
  /** Whether the text had precision below a millisecond that is not zero. */
  readonly subMillisecond: boolean;
  /** Milliseconds with the sub-millisecond part as a fraction (for comparisons). */
  readonly exactMs: number;
}

/**
 * Parses an RFC 3339 date-time with an offset. Returns undefined for anything else, including
 * impossible dates (Feb 30), hours over 23 and offsets over 23:59.
 */
export function parseRfc3339(text: string): ParsedInstant | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac = '', zone, sign, oh, om] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  let offsetMinutes = 0;
  if (zone !== 'Z' && zone !== 'z') {
    const offH = Number(oh);
    const offM = Number(om);
    if (offH > 23 || offM > 59) return undefined;
    offsetMinutes = (sign === '-' ? -1 : 1) * (offH * 60 + offM);
  }
  // A leap second is read as the last moment of its minute.
  const wholeSecond = Math.min(second, 59);
  const millis = Number(frac.padEnd(3, '0').slice(0, 3));
  const date = new Date(Date.UTC(2000, month - 1, day, hour, minute, wholeSecond, millis));
  // Date.UTC maps years 0-99 to 1900-1999; set the year explicitly.
  date.setUTCFullYear(year);
  const ms = date.getTime() - offsetMinutes * 60_000;
  if (!Number.isFinite(ms)) return undefined;
  const below = frac.slice(3);
  return { ms, subMillisecond: /[1-9]/.test(below), exactMs: ms + (below ? Number(`0.${below}`) : 0) };
}

/** A calendar date `YYYY-MM-DD` that exists. */
export function isCalendarDate(text: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return false;
  const month = Number(m[2]);
  const day = Number(m[3]);
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(Number(m[1]), month);
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

export const DAY_MS = 86_400_000;
export function dayOf(ms: number): number {
  return Math.floor(ms / DAY_MS);
}
