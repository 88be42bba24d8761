/**
 * Loaded into the service under test with `--import` when `npm run bench -- --stalls` asks for it
 * (never in production): what blocks the event loop, measured rather than guessed. It keeps
 * - the event loop's delay (perf_hooks histogram, 5 ms resolution): max and p99;
 * - every garbage collection (PerformanceObserver 'gc'): count, total and longest pause, by kind;
 * - every SQLite statement that held the thread 5 ms or more (better-sqlite3 is synchronous, so
 *   such a call is a stall), by SQL text: a COMMIT here is the write plus any WAL checkpoint.
 * On SIGUSR2 it writes what it saw since the last signal to $EDS_BENCH_STALL_FILE and starts over.
 */
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

const SLOW_MS = 5;
const file = process.env.EDS_BENCH_STALL_FILE;
const loop = monitorEventLoopDelay({ resolution: 5 });
loop.enable();

const GC_KINDS = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak-callbacks',
};
let gc = {};
let statements = {};

new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = GC_KINDS[entry.detail?.kind] ?? String(entry.detail?.kind);
    gc[kind] ??= { count: 0, total_ms: 0, max_ms: 0, over_20ms: 0 };
    const g = gc[kind];
    g.count++;
    g.total_ms += entry.duration;
    g.max_ms = Math.max(g.max_ms, entry.duration);
    if (entry.duration > 20) g.over_20ms++;
  }
}).observe({ entryTypes: ['gc'] });

function noteSlow(sql, ms) {
  const key = sql.replace(/\s+/g, ' ').slice(0, 120);
  statements[key] ??= { count: 0, total_ms: 0, max_ms: 0 };
  const s = statements[key];
  s.count++;
  s.total_ms += ms;
  s.max_ms = Math.max(s.max_ms, ms);
}

// The service's own better-sqlite3 (the same module instance, so its prototypes).
const require = createRequire(process.env.EDS_BENCH_SERVER_PACKAGE ?? import.meta.url);
const Database = require('better-sqlite3');
const scratch = new Database(':memory:');
const statementProto = Object.getPrototypeOf(scratch.prepare('select 1'));
scratch.close();
for (const method of ['run', 'all', 'get']) {
  const original = statementProto[method];
  statementProto[method] = function timed(...args) {
    const start = performance.now();
    try {
      return original.apply(this, args);
    } finally {
      const ms = performance.now() - start;
      if (ms >= SLOW_MS) noteSlow(this.source, ms);
    }
  };
}
for (const method of ['exec', 'pragma']) {
  const original = Database.prototype[method];
  Database.prototype[method] = function timed(sql, ...rest) {
    const start = performance.now();
    try {
      return original.call(this, sql, ...rest);
    } finally {
      const ms = performance.now() - start;
      if (ms >= SLOW_MS) noteSlow(`${method} ${sql}`, ms);
    }
  };
}

process.on('SIGUSR2', () => {
  const report = {
    loop_delay_max_ms: loop.max / 1e6,
    loop_delay_p99_ms: loop.percentile(99) / 1e6,
    gc,
    slow_statements: statements,
  };
  if (file) writeFileSync(file, JSON.stringify(report));
  loop.reset();
  gc = {};
  statements = {};
});
