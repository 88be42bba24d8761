#!/usr/bin/env node
/**
 * `npm run lint` step: the product speaks to its users about the product. Docs, READMEs, code
 * comments, test names and bench files must not cite the history of the project's making:
 * numbered work stages ("stop 28", "stage 3"), issue or pull-request numbers ("issue 16", "#16"),
 * or work sessions. Git keeps that history; the product states the fact instead.
 *
 * Scans every file git tracks (`git ls-files` in the working directory) except package-lock.json
 * and binary files, prints `path:line: text` for each reference, and exits 1 if there is any.
 * It first checks its own rules against planted examples, so a rule that stops matching fails
 * the lint instead of letting everything through. (No rule concerns dates, so the CHANGELOG's
 * release dates pass as they are.)
 *
 *   node scripts/check-product-text.mjs
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/** Each rule names what it finds; the pattern is matched line by line, case-insensitively. */
export const RULES = [
  {
    what: 'a numbered work stage',
    // "stop 28", "stops 28 and 29", "stage 3", "sprint 4", "milestone 2"; not "stop 5 s later".
    pattern: /\b(?:stops?|stages?|sprints?|milestones?)\s+\d+\b(?!\s*(?:ms|s|seconds?|minutes?|%)\b)/i,
  },
  {
    what: 'an issue or pull-request number',
    pattern: /\b(?:issues?|tickets?|pull requests?|PRs?)\s*#?\d+\b|(?<![\w&$#/.-])#\d+\b(?![\w-])/i,
  },
  {
    what: 'a work session',
    // PgBouncer's "session mode" (and session pooling) is a product fact, not history.
    pattern: /\bsessions?\b(?![\s-]+(?:mode|pool(?:ing|er)?)\b)/i,
  },
];

/** Files never scanned: the lockfile, and this check and its test, which must spell the rules out. */
const SKIPPED = [/(^|\/)package-lock\.json$/, /^scripts\/check-product-text(\.test)?\.mjs$/];

/** The history references in one file's text: `{ line, what, text }` for each offending line. */
export function findHistoryReferences(text) {
  const found = [];
  text.split('\n').forEach((line, index) => {
    for (const rule of RULES) {
      const match = rule.pattern.exec(line);
      if (match) found.push({ line: index + 1, what: rule.what, text: match[0] });
    }
  });
  return found;
}

/** Planted examples every rule must catch, and product text none may flag. */
const PLANTED = [
  'figures in docs/benchmarks.md, stop 30',
  'SQLite 9 % in stops 28 and 29',
  'built in stage 2 of the rework',
  'digest secret rotation (issue 18)',
  "for the audit, issue 17's accounting",
  'see #16 for the discussion',
  'What limits the routes was not profiled in this session.',
];
const CLEAN = [
  'Connect directly or through a pooler in session mode (PgBouncer in transaction mode)',
  'stop the API processes of the earlier release before it',
  'the worker stops claiming and lets in-flight attempts finish',
  'an audit row per issued key; the digest of key #abc is not a number',
  'color: #fff; and a Lua length: #paths + 1',
];

function selfCheck() {
  const missed = PLANTED.filter((text) => findHistoryReferences(text).length === 0);
  const flagged = CLEAN.filter((text) => findHistoryReferences(text).length > 0);
  if (missed.length || flagged.length) {
    for (const text of missed) console.error(`check-product-text: a rule no longer catches: ${text}`);
    for (const text of flagged) console.error(`check-product-text: a rule now flags product text: ${text}`);
    process.exit(2);
  }
}

function trackedFiles() {
  return execFileSync('git', ['ls-files', '-z'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
    .split('\0')
    .filter((path) => path && !SKIPPED.some((skip) => skip.test(path)));
}

function main() {
  selfCheck();
  let count = 0;
  for (const path of trackedFiles()) {
    let bytes;
    try {
      bytes = readFileSync(path);
    } catch {
      continue; // deleted in the working tree but not yet from the index
    }
    if (bytes.includes(0)) continue; // binary
    for (const hit of findHistoryReferences(bytes.toString('utf8'))) {
      console.error(`${path}:${hit.line}: ${hit.what}: "${hit.text}"`);
      count++;
    }
  }
  if (count) {
    console.error(
      `check-product-text: ${count} reference(s) to the history of the project's making; ` +
        'say the fact without it (git keeps the history).',
    );
    process.exit(1);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
