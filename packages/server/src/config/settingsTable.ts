/**
 * The operations guide's settings table, written from the settings schema so the two cannot
 * drift (`npm run docs:settings` writes it; a test compares).
 */
import type { TObject } from 'typebox';
import type { Setting } from './settings.js';

export const TABLE_START =
  '<!-- settings table: written by npm run docs:settings from the settings schema -->';
export const TABLE_END = '<!-- end of settings table -->';

const FORMAT_TYPES: Readonly<Record<string, string>> = {
  'http-url': 'http(s) URL',
  'redis-url': '`redis://` or `rediss://` URL',
  'proxy-url': '`http://` URL',
  'address-list': 'addresses or CIDRs',
  'database-url': 'path or URL',
};

export function settingsTable(schema: TObject): string {
  const rows = Object.entries(schema.properties).map(([name, property]) => {
    const setting = property as Setting;
    const variable = setting.fileForm ? `\`${name}\` (or \`${name}_FILE\`)` : `\`${name}\``;
    return `| ${[variable, typeOf(setting), defaultOf(setting), setting.description].map(cell).join(' | ')} |`;
  });
  return ['| variable | type | default | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

function typeOf(setting: Setting): string {
  const parts = [baseType(setting)];
  if (setting.secret) parts.push('secret');
  if (setting.appliesWhen) parts.push(setting.appliesWhen.label);
  if (setting.requiredWhenApplies) parts.push('required');
  return parts.join('; ');
}

function baseType(setting: Setting): string {
  if (setting.textForm === 'duration') return `duration, at least ${(setting.minimum as number) / 1000} s`;
  if (setting.textForm === 'comma-list') return 'comma-separated seconds';
  if (setting.type === 'integer') return `whole number ${setting.minimum}–${setting.maximum}`;
  if (setting.type === 'number') return `number ${setting.minimum}–${setting.maximum}`;
  if (setting.type === 'boolean') return '`true` or `false`';
  if (Array.isArray(setting.enum)) return setting.enum.map((value) => `\`${value}\``).join(', ');
  if (typeof setting.pattern === 'string') return `text matching \`${setting.pattern}\``;
  return (typeof setting.format === 'string' && FORMAT_TYPES[setting.format]) || 'text';
}

function defaultOf(setting: Setting): string {
  if (setting.defaultText !== undefined) return setting.defaultText;
  const value = setting.default;
  if (value === undefined) return 'unset';
  if (value === '') return 'empty';
  return `\`${Array.isArray(value) ? value.join(',') : String(value)}\``;
}

/** A table cell: a `|` would end it. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}
