/**
 * Reads the environment against the settings schema, once: each variable's text (or its
 * `NAME_FILE`'s content) becomes the schema's type, is checked by the compiled schema, and a
 * value that fails is reported with the sentence its schema implies. Every problem is collected,
 * so one start-up names them all.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import type { TObject } from 'typebox';
import { defineStringFormat, schemaCheck, type ValueCheck } from '../schemaChecks.js';
import type { Setting } from './settings.js';

export type Env = Readonly<Record<string, string | undefined>>;

export interface EnvironmentReading {
  /** Each setting's value, its default when not given, undefined when neither. */
  readonly values: Readonly<Record<string, unknown>>;
  readonly problems: string[];
}

const invalid = Symbol('invalid');

/** The checks behind the settings' own formats, and what a refused value is told. */
const FORMATS: Readonly<Record<string, { check: (text: string) => boolean; message: string }>> = {
  'http-url': { check: isHttpUrl, message: 'must be an http(s) URL' },
  'redis-url': {
    check: (text) =>
      urlWith(text, (url) => ['redis:', 'rediss:'].includes(url.protocol) && url.hostname !== ''),
    message: 'must be a redis:// or rediss:// URL with a host',
  },
  // The value is not echoed: it may hold the proxy's password.
  'proxy-url': {
    check: (text) =>
      urlWith(
        text,
        (url) =>
          url.protocol === 'http:' && url.hostname !== '' && (url.pathname === '/' || url.pathname === ''),
      ),
    message: 'must be an http://[user:password@]host:port URL of a forward proxy',
  },
  'address-list': {
    check: (text) => text.split(',').every((entry) => isAddressOrCidr(entry.trim())),
    message: 'must be a comma-separated list of IP addresses or CIDRs',
  },
  'database-url': {
    check: (text) => {
      if (/^postgres(ql)?:\/\//.test(text)) return true;
      const path = sqlitePath(text);
      return path !== '' && !path.includes('://');
    },
    message: 'must be a file path, a sqlite: URL or a postgres:// URL',
  },
};

/** The SQLite file a database setting that is not a postgres:// URL names. */
export function sqlitePath(text: string): string {
  return text.startsWith('sqlite:') ? text.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '') : text;
}

let formatsRegistered = false;
/** The settings' own string formats, defined for the schema checks (once). */
export function useSettingFormats(): void {
  if (formatsRegistered) return;
  for (const [name, { check }] of Object.entries(FORMATS)) defineStringFormat(name, check);
  formatsRegistered = true;
}

export function readEnvironment(schema: TObject, env: Env): EnvironmentReading {
  useSettingFormats();
  const values: Record<string, unknown> = {};
  const problems: string[] = [];
  const fail = (name: string, message: string) => problems.push(`${name} ${message}`);

  for (const [name, property] of Object.entries(schema.properties)) {
    const setting = property as Setting;
    if (!applies(setting, env)) continue;
    const text = setting.fileForm ? fromFileForm(name, env, fail) : trimmed(env[name]);
    if (text === undefined) {
      if (setting.requiredWhenApplies) fail(name, 'is required');
      values[name] = setting.default;
      continue;
    }
    const value = fromText(setting, text);
    if (value === invalid || !compiled(setting)(value)) {
      fail(name, messageFor(setting));
      values[name] = setting.default;
      continue;
    }
    values[name] = value;
  }
  return { values, problems };
}

const validators = new WeakMap<Setting, ValueCheck>();
function compiled(setting: Setting): ValueCheck {
  let validator = validators.get(setting);
  if (!validator) {
    validator = schemaCheck(setting);
    validators.set(setting, validator);
  }
  return validator;
}

function applies(setting: Setting, env: Env): boolean {
  if (!setting.appliesWhen) return true;
  const { setting: other, matches } = setting.appliesWhen;
  return new RegExp(matches).test(trimmed(env[other]) ?? '');
}

function trimmed(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function fromFileForm(name: string, env: Env, fail: (name: string, message: string) => void) {
  const direct = trimmed(env[name]);
  if (direct) return direct;
  const path = trimmed(env[`${name}_FILE`]);
  if (!path) return undefined;
  try {
    return trimmed(readFileSync(path, 'utf8'));
  } catch {
    fail(`${name}_FILE`, 'names a file that cannot be read');
    return undefined;
  }
}

const DURATION_UNITS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

function fromText(setting: Setting, text: string): unknown {
  if (setting.textForm === 'duration') {
    const m = /^(\d+)(s|m|h|d)?$/.exec(text);
    const ms = m ? Number(m[1]) * (DURATION_UNITS[m[2] ?? 's'] ?? 1000) : Number.NaN;
    return Number.isSafeInteger(ms) ? ms : invalid;
  }
  if (setting.textForm === 'comma-list') return text.split(',').map((part) => Number(part.trim()));
  switch (setting.type) {
    case 'integer':
      return /^-?\d+$/.test(text) ? Number(text) : invalid;
    case 'number': {
      const value = Number(text);
      return Number.isFinite(value) ? value : invalid;
    }
    case 'boolean': {
      const lower = text.toLowerCase();
      if (['true', '1', 'yes', 'on'].includes(lower)) return true;
      if (['false', '0', 'no', 'off'].includes(lower)) return false;
      return invalid;
    }
    default:
      return text;
  }
}

function messageFor(setting: Setting): string {
  if (setting.textForm === 'duration') {
    return `must be a duration of at least ${(setting.minimum as number) / 1000} s, like 72h, 30m or 3600`;
  }
  if (setting.textForm === 'comma-list') return 'must be a comma-separated list of non-negative seconds';
  if (setting.type === 'integer')
    return `must be a whole number from ${setting.minimum} to ${setting.maximum}`;
  if (setting.type === 'number') return `must be a number from ${setting.minimum} to ${setting.maximum}`;
  if (setting.type === 'boolean') return 'must be true or false';
  if (Array.isArray(setting.enum)) return `must be one of ${setting.enum.join(', ')}`;
  if (typeof setting.pattern === 'string') return `must match ${new RegExp(setting.pattern)}`;
  const format = typeof setting.format === 'string' ? FORMATS[setting.format] : undefined;
  if (format) return format.message;
  throw new Error('a setting whose refusal has no sentence');
}

function isHttpUrl(text: string): boolean {
  return urlWith(text, (url) => url.protocol === 'http:' || url.protocol === 'https:');
}

function urlWith(text: string, accept: (url: URL) => boolean): boolean {
  try {
    return accept(new URL(text));
  } catch {
    return false;
  }
}

function isAddressOrCidr(entry: string): boolean {
  const [address = '', prefix, extra] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}
