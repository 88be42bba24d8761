/** Parsers for option values; a bad value stops the command before anything is opened or changed. */
import { InvalidArgumentError } from 'commander';
import { ROUTE_GROUPS, type RouteGroup } from '../contract/routes.js';
import { parseRfc3339 } from '../time.js';

export function parseTrueFalse(text: string): boolean {
  if (text === 'true') return true;
  if (text === 'false') return false;
  throw new InvalidArgumentError('expected true or false.');
}

export function parseOnOff(text: string): boolean {
  if (text === 'on') return true;
  if (text === 'off') return false;
  throw new InvalidArgumentError('expected on or off.');
}

export function parseList(text: string): string[] {
  return text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
}

/** `encounters,documents`; an empty value or `none` means no route group. */
export function parseRouteGroups(text: string): RouteGroup[] {
  const names = text.trim() === 'none' ? [] : parseList(text);
  const unknown = names.filter((n) => !(ROUTE_GROUPS as readonly string[]).includes(n));
  if (unknown.length > 0) {
    throw new InvalidArgumentError(
      `unknown route group ${unknown.join(', ')}; use ${ROUTE_GROUPS.join(', ')}.`,
    );
  }
  return ROUTE_GROUPS.filter((g) => names.includes(g));
}

/** An RFC 3339 date-time with an offset, as epoch milliseconds. */
export function parseInstant(text: string): number {
  const parsed = parseRfc3339(text);
  if (!parsed)
    throw new InvalidArgumentError(
      'expected an RFC 3339 date-time with an offset, e.g. 2026-05-01T00:00:00Z.',
    );
  return parsed.ms;
}

export function parseWholeNumber(min: number, max: number) {
  return (text: string): number => {
    if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
      throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}.`);
    }
    return Number(text);
  };
}

/** `--grace SECONDS` of the rotation commands: 0 (at once) or more whole seconds. */
export function parseGraceSeconds(text: string): number {
  const trimmed = text.trim();
  if (/^-\d/.test(trimmed))
    throw new InvalidArgumentError('a grace cannot be negative; use 0 to switch at once.');
  if (!/^\d+$/.test(trimmed) || !Number.isSafeInteger(Number(trimmed))) {
    throw new InvalidArgumentError('expected whole seconds, 0 or more (e.g. 86400 for a day).');
  }
  return Number(trimmed);
}

/**
 * `--rate-limit N|default`: requests a second per key (0: no limit), or `default` for the
 * deployment's (a string: commander would turn a null option value into '').
 */
export function parseRateLimit(text: string): number | 'default' {
  if (text === 'default') return text;
  if (!/^(0|[1-9][0-9]{0,8})$/.test(text)) {
    throw new InvalidArgumentError('expected a whole number of requests a second (0 for none) or "default".');
  }
  return Number(text);
}
