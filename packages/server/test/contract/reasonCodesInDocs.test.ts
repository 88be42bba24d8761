/**
 * The documentation names reason codes as the contract does: every backticked name in the
 * READMEs and docs/ that has the shape of a reason code is one of the reason table's codes, and
 * where a text gives it a status (`401 revoked_key`, 401 `revoked_key`, a table row's status
 * cell), it is the table's status.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { REASON_CODES, REASONS, type ReasonCode } from '../../src/contract/reasons.js';

const ROOT = join(import.meta.dirname, '..', '..', '..', '..');

function markdownUnder(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return markdownUnder(path);
      return name.endsWith('.md') ? [path] : [];
    });
}

const DOCUMENTS = [
  join(ROOT, 'README.md'),
  join(ROOT, 'packages', 'sdk', 'README.md'),
  join(ROOT, 'packages', 'server', 'README.md'),
  ...markdownUnder(join(ROOT, 'docs')),
  ...markdownUnder(join(ROOT, 'packages', 'server', 'guides')),
  join(ROOT, 'CHANGELOG.md'),
].filter((path) => {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
});

/** The words reason codes are made of: what they refuse, and why. */
const REASON_SHAPE =
  /^(invalid|missing|unsupported|malformed|revoked|disabled|expired|link|range)_|_(keys_disabled|token|not_found|denied|unavailable|required|not_allowed|allowlisted|limited|expired|invalid|not_satisfiable|for_document)$/;

/** Names of that shape from other vocabularies than problem bodies, with where they come from. */
const OTHER_VOCABULARIES: Readonly<Record<string, string>> = {
  secret_unavailable: "a webhook attempt's error: the endpoint's signing secret cannot be read",
};

const SNAKE_CASE = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$/;

interface Mention {
  file: string;
  line: number;
  code: string;
  /** The status the text gives it, if any. */
  status?: number;
}

/** Inline code spans outside fenced blocks, with the status the text pairs them with. */
function mentions(path: string): Mention[] {
  const file = relative(ROOT, path);
  const found: Mention[] = [];
  let fenced = false;
  readFileSync(path, 'utf8')
    .split('\n')
    .forEach((text, index) => {
      if (/^\s*(```|~~~)/.test(text)) fenced = !fenced;
      if (fenced) return;
      const line = index + 1;
      const row = /^\|\s*(\d{3})\s*\|([^|]*)\|/.exec(text);
      const rowCodes = new Set(row ? [...row[2]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!) : []);
      for (const span of text.matchAll(/(\d{3})?\s*`([^`\n]+)`/g)) {
        const inner = span[2]!.trim();
        const paired = /^(\d{3}) ([a-z0-9_]+)$/.exec(inner);
        const code = paired ? paired[2]! : inner;
        if (!SNAKE_CASE.test(code)) continue;
        const statusText = paired?.[1] ?? span[1] ?? (rowCodes.has(code) ? row![1] : undefined);
        found.push({ file, line, code, ...(statusText ? { status: Number(statusText) } : {}) });
      }
    });
  return found;
}

const ALL = DOCUMENTS.flatMap(mentions);

/** The sentences of a document's prose (fenced blocks left out), each on one line. */
function sentences(path: string): string[] {
  const prose = readFileSync(path, 'utf8').replace(/^\s*(```|~~~)[\s\S]*?^\s*\1.*$/gm, '');
  return prose
    .split(/\n\s*\n/)
    .flatMap((paragraph) => paragraph.replace(/\s*\n\s*/g, ' ').split(/(?<=[.;])\s+/));
}
const isReasonCode = (code: string): code is ReasonCode => (REASON_CODES as string[]).includes(code);

test('happy: the READMEs and docs are read, and they name reason codes', () => {
  assert.ok(
    DOCUMENTS.some((path) => path.endsWith(join('docs', 'media.md'))),
    'docs/ is read',
  );
  assert.ok(ALL.filter((m) => isReasonCode(m.code)).length > 50, 'reason codes are found');
});

test('error: every code-shaped name in the docs is a code of the reason table', () => {
  const unknown = ALL.filter(
    (m) => REASON_SHAPE.test(m.code) && !isReasonCode(m.code) && !(m.code in OTHER_VOCABULARIES),
  ).map((m) => `${m.file}:${m.line} \`${m.code}\``);
  assert.deepEqual(unknown, []);
});

test('error: a key said to be revoked, disabled or expired is named by its own code, never invalid_key', () => {
  const wrong: string[] = [];
  for (const path of DOCUMENTS) {
    for (const sentence of sentences(path)) {
      if (!sentence.includes('`invalid_key`')) continue;
      for (const state of ['revoked', 'disabled', 'expired']) {
        const said = new RegExp(`\\b(was|is|been) ${state}\\b`).test(sentence);
        if (said && !sentence.includes(`\`${state}_key\``))
          wrong.push(`${relative(ROOT, path)}: ${sentence}`);
      }
    }
  }
  assert.deepEqual(wrong, []);
});

test('error: a status the docs give a code is the status of the reason table', () => {
  const wrong = ALL.filter((m) => m.status !== undefined && isReasonCode(m.code))
    .filter((m) => REASONS[m.code as ReasonCode].status !== m.status)
    .map(
      (m) =>
        `${m.file}:${m.line} ${m.status} \`${m.code}\` (the table: ${REASONS[m.code as ReasonCode].status})`,
    );
  assert.deepEqual(wrong, []);
});
