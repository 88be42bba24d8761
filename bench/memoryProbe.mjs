/**
 * Loaded into the service under test with `--import` by `npm run bench:memory` (never in
 * production): on SIGUSR2 it writes the request thread's memory to $EDS_BENCH_MEMORY_FILE, as
 * V8 and Node see it (process.memoryUsage and each V8 heap space's committed size), so a peak
 * RSS can be split into the request thread's heap and everything else.
 */
import { writeFileSync } from 'node:fs';
import v8 from 'node:v8';

const file = process.env.EDS_BENCH_MEMORY_FILE;

process.on('SIGUSR2', () => {
  if (!file) return;
  const usage = process.memoryUsage();
  const spaces = Object.fromEntries(
    v8.getHeapSpaceStatistics().map((space) => [space.space_name, space.physical_space_size]),
  );
  writeFileSync(
    file,
    JSON.stringify({
      heap_total: usage.heapTotal,
      heap_used: usage.heapUsed,
      external: usage.external,
      array_buffers: usage.arrayBuffers,
      spaces,
    }),
  );
});
