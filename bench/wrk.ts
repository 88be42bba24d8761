/**
 * The load generator: wrk (one thread, C connections), run as its own process so it never shares
 * an event loop with what it measures. A Lua `done` hook prints its summary as JSON: requests,
 * latency percentiles and the maximum, and errors. While it runs its CPU time is sampled from
 * /proc: a load generator using less than a whole core is not what limits the rate it reports.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const SCRIPT = `
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"max_us":%d,"non_2xx_3xx":%d,"socket_errors":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max,
    e.status, e.connect + e.read + e.write + e.timeout))
end
`;

/**
 * A request hook for routes whose path changes with every request: the paths come from a file
 * (one a line), read once, taken in order from a starting index given on the command line.
 */
const PATHS_SCRIPT = `
local paths = {}
local i = 0
init = function(args)
  for line in io.lines(args[1]) do paths[#paths + 1] = line end
  i = tonumber(args[2])
end
request = function()
  local path = paths[(i % #paths) + 1]
  i = i + 1
  return wrk.format(nil, path)
end
`;

/** Paths to walk, and where the next run starts in them (kept across runs by the caller). */
export interface PathWalk {
  file: string;
  /** How many paths to skip; advanced by every run's requests, warm-ups included. */
  next: number;
  /** How many paths the file holds: past them the walk starts over and answers repeat pages. */
  paths: number;
}

export interface WrkResult {
  rps: number;
  requests: number;
  p50: number;
  p99: number;
  /** The slowest single answer of the run, ms. */
  max: number;
  non2xx: number;
  errors: number;
  /** wrk's own CPU use over the run, percent of one core. */
  wrkCpu: number;
}

const CLOCK_TICKS = 100;

/** CPU seconds (user + system, all threads) a process has used so far. */
export function cpuSeconds(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

export function createWrk(resultsDir: string, connections: number) {
  const script = join(resultsDir, 'wrk-summary.lua');
  writeFileSync(script, SCRIPT);
  const walkScript = join(resultsDir, 'wrk-walk.lua');
  writeFileSync(walkScript, PATHS_SCRIPT + SCRIPT);
  const run = (
    url: string,
    token: string | undefined,
    seconds: number,
    walk?: PathWalk,
  ): Promise<WrkResult> =>
    new Promise((resolve, reject) => {
      const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '10s'];
      args.push('-s', walk ? walkScript : script);
      if (token) args.push('-H', `Authorization: Bearer ${token}`);
      args.push(url);
      if (walk) args.push('--', walk.file, String(walk.next));
      const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      let cpu = 0;
      const sampler = setInterval(() => {
        cpu = cpuSeconds(child.pid!) ?? cpu;
      }, 100);
      child.stdout.on('data', (chunk) => {
        out += chunk;
      });
      child.on('error', reject);
      child.on('exit', (code) => {
        clearInterval(sampler);
        const line = out.split('\n').find((l) => l.startsWith('WRK_JSON '));
        if (code !== 0 || !line) return reject(new Error(`wrk failed (${code}): ${out.slice(-500)}`));
        const s = JSON.parse(line.slice('WRK_JSON '.length));
        const duration = s.duration_us / 1e6;
        // Answers still in flight when wrk stopped were sent too.
        if (walk) {
          const beforeWrap = walk.next < walk.paths;
          walk.next += s.requests + connections;
          if (beforeWrap && walk.next >= walk.paths) {
            console.error(`  ! the walk of ${walk.paths} pages wrapped: later answers repeat pages`);
          }
        }
        resolve({
          rps: s.requests / duration,
          requests: s.requests,
          p50: s.p50_us / 1000,
          p99: s.p99_us / 1000,
          max: s.max_us / 1000,
          non2xx: s.non_2xx_3xx,
          errors: s.socket_errors,
          wrkCpu: (100 * cpu) / duration,
        });
      });
    });
  return {
    /** A one-second warm-up, then the measured run. */
    async measure(
      url: string,
      token: string | undefined,
      seconds: number,
      walk?: PathWalk,
    ): Promise<WrkResult> {
      await run(url, token, 1, walk);
      return run(url, token, seconds, walk);
    },
    /** The measured run alone (the caller has warmed up, and samples around it). */
    run,
  };
}
