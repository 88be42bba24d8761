/**
 * Times: stored as epoch milliseconds; written out as `YYYY-MM-DDTHH:MM:SS.sssZ`
 * (decisions.md, Responses); read in as RFC 3339 with `Z` or a `±HH:MM` offset.
 */
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|([+-])(\d{2}):(\d{2}))$/;

// toISOString costs about 250 ns, and a list page writes 250 times; the date part repeats, so it
// is kept per day and only the time of day is formatted. Years outside 0000-9999 (written with
// six digits and a sign) take the slow path.
const MAX_FAST_MS = 253_402_300_800_000;
const datePrefixes = new Map<number, string>();
const TWO_DIGITS = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));
const THREE_DIGITS = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));

export function toIso(ms: number): string {
  if (!(ms >= 0 && ms < MAX_FAST_MS) || !Number.isInteger(ms)) return new Date(ms).toISOString();
  const day = Math.floor(ms / DAY_MS);
  let prefix = datePrefixes.get(day);
  if (prefix === undefined) {
    if (datePrefixes.size >= 4096) datePrefixes.clear();
    prefix = new Date(day * DAY_MS).toISOString().slice(0, 11);
    datePrefixes.set(day, prefix);
  }
  let rest = ms - day * DAY_MS;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  const millis = rest - seconds * 1000;
  return `${prefix}${TWO_DIGITS[hours]}:${TWO_DIGITS[minutes]}:${TWO_DIGITS[seconds]}.${THREE_DIGITS[millis]}Z`;
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

export const HOUR_MS = 3_600_000;
export function hourOf(ms: number): number {
  return Math.floor(ms / HOUR_MS);
}
