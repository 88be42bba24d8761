/**
 * Buckets shared by every API process through Redis, with the same GCRA arithmetic as
 * tokenBucket.ts, atomic on the server. The caller's clock is passed in, so processes agree as
 * far as their clocks do (NTP) and tests can drive time.
 *
 * Takes are gathered per turn of the event loop: every request (keyed or per address) that asks
 * for a token while this turn's I/O is handled is decided by one script call (EVALSHA; ioredis
 * loads the script on NOSCRIPT), sent when the turn's I/O is done (setImmediate). Each request
 * still costs one round trip, shared with its neighbours. Why: under load a turn carries tens of requests, and
 * per command the client's encoding, promise and reply parsing (about 14 µs) and Redis's
 * script call (about 7.5 µs) cost more than the bucket arithmetic; one command for the turn pays
 * them once. The script keeps each bucket's TAT in a Lua table while it runs, so a key taking
 * many tokens in one turn costs one GET and one SET.
 *
 * Commands fail fast while disconnected (no offline queue, short timeout): the callers fall
 * back to limiting alone rather than making requests wait on Redis. All keys of one call must
 * live on one server: a single Redis (or a primary with replicas), not Redis Cluster.
 */
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import { type BucketDecision, type BucketPolicy, intervalMs, onGrid, takeToken } from './tokenBucket.js';

// KEYS: one entry per run of takes of one bucket with one policy, in arrival order (a bucket may
// repeat when its policy changed within the call). ARGV, per entry: interval and capacity (ms),
// the number of takes n, then each take's now, all on tokenBucket.ts's grid. Returns per entry
// the bucket's TAT before its first take ('' when none is stored); the caller replays the takes
// from it with tokenBucket.ts, this loop's arithmetic on the same doubles (exact on the grid).
// Why: under load a call decides tens of takes of one key; with three arguments in and three
// formatted strings out per take the script ran 76 µs for 25 takes, with a number in and nothing
// out per take 46 µs, and every request of the turn waits for it.
// Numbers travel as text with 17 significant digits: Redis would truncate Lua numbers to
// integers, and tostring's 14 digits drop a millisecond timestamp's fraction (the stored TAT
// would drift). A bucket is kept a minute past the moment it is full again: Redis expires by its
// own clock, the arithmetic runs on the callers'.
const TAKE_TOKENS_LUA = `
local tats = {}
local expiries = {}
local out = {}
local function text(x) return string.format('%.17g', x) end
local arg = 1
for i = 1, #KEYS do
  local key = KEYS[i]
  local interval = tonumber(ARGV[arg])
  local capacity = tonumber(ARGV[arg + 1])
  local n = tonumber(ARGV[arg + 2])
  arg = arg + 3
  local tat = tats[key]
  if tat == nil then
    -- pcall: a key that is not ours (wrong type, not a number) counts as a full bucket instead of
    -- failing every request of the call.
    local stored = redis.pcall('GET', key)
    if type(stored) == 'string' then tat = tonumber(stored) end
    -- Not finite ('inf', 'nan', '1e999'): text() would send back what Number() reads as NaN.
    if tat ~= nil and not (tat > -math.huge and tat < math.huge) then tat = nil end
    -- On tokenBucket.ts's grid of 2^-10 ms, as its onGrid does (an earlier release's TAT is not).
    if tat ~= nil then tat = math.floor(tat * 1024 + 0.5) / 1024 end
  end
  out[i] = tat == nil and '' or text(tat)
  for j = 1, n do
    local now = tonumber(ARGV[arg])
    arg = arg + 1
    if tat == nil or tat < now then tat = now end
    local debt = tat - now + interval
    if not (debt > capacity) then
      tat = tat + interval
      expiries[key] = math.ceil(debt) + 60000
    end
  end
  tats[key] = tat
end
for key, expiry in pairs(expiries) do
  redis.call('SET', key, text(tats[key]), 'PX', expiry)
end
return out
`;

/** Takes per script call: bounds the command's size and the time Redis spends in one script. */
const MAX_TAKES_PER_CALL = 512;

type TakeTokensCommand = (numberOfKeys: number, ...keysThenArgs: (string | number)[]) => Promise<string[]>;

interface PendingTake {
  readonly bucket: string;
  readonly policy: BucketPolicy;
  readonly now: number;
  readonly resolve: (decision: BucketDecision) => void;
  readonly reject: (error: Error) => void;
}

/** A call's takes of one bucket with one policy, in arrival order: one entry of the script's KEYS. */
interface BucketRun {
  readonly bucket: string;
  readonly policy: BucketPolicy;
  readonly interval: number;
  readonly capacity: number;
  readonly takes: PendingTake[];
}

/** One TAT per run: '' (none stored) or a finite number. */
function isScriptReply(reply: unknown, runs: number): reply is string[] {
  return (
    Array.isArray(reply) &&
    reply.length === runs &&
    reply.every((tat) => tat === '' || (typeof tat === 'string' && Number.isFinite(Number(tat))))
  );
}

/** The call's takes as runs per bucket, keeping each bucket's order (buckets are independent). */
function runsOf(takes: readonly PendingTake[]): BucketRun[] {
  const runs: BucketRun[] = [];
  const current = new Map<string, BucketRun>();
  for (const take of takes) {
    const interval = intervalMs(take.policy);
    const capacity = take.policy.burst * interval;
    let run = current.get(take.bucket);
    if (run === undefined || run.interval !== interval || run.capacity !== capacity) {
      run = { bucket: take.bucket, policy: take.policy, interval, capacity, takes: [] };
      runs.push(run);
      current.set(take.bucket, run);
    }
    run.takes.push(take);
  }
  return runs;
}

export interface RedisBucketsOptions {
  /** Upper bound on one round trip; past it the requests waiting on it are decided locally. */
  commandTimeoutMs?: number;
  onReady?: () => void;
  /** A failed connection attempt, or a connection lost (not on close()). */
  onError?: (error: Error) => void;
  /** A script call answered: how long it took and how many takes it decided. */
  onCall?: (seconds: number, takes: number) => void;
}

export class RedisBuckets {
  private readonly client: Redis;
  private readonly takeTokensScript: TakeTokensCommand;
  private readonly onCall: ((seconds: number, takes: number) => void) | undefined;
  private pending: PendingTake[] = [];
  private flushScheduled = false;
  private closing = false;

  constructor(url: string, options: RedisBucketsOptions = {}) {
    // Loaded here, not at start-up: a deployment without Redis never pays for the client.
    const { Redis: RedisClient } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
    this.client = new RedisClient(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.commandTimeoutMs ?? 250,
      connectTimeout: 2000,
      // Keep trying to reconnect, at most every 2 s, for the life of the process.
      retryStrategy: (times) => Math.min(times * 100, 2000),
      keyPrefix: 'eds:rl:',
    });
    this.onCall = options.onCall;
    this.client.on('ready', () => options.onReady?.());
    // Without a listener an 'error' event would crash the process.
    this.client.on('error', (error: Error) => options.onError?.(error));
    this.client.on('close', () => {
      if (!this.closing) options.onError?.(new Error('connection to Redis closed'));
    });
    // No fixed key count: each call passes its own (ioredis prefixes that many keys).
    this.client.defineCommand('edsTakeTokens', { lua: TAKE_TOKENS_LUA });
    const command = (this.client as unknown as { edsTakeTokens: TakeTokensCommand }).edsTakeTokens;
    this.takeTokensScript = command.bind(this.client);
  }

  /** Connected and able to take a command now. */
  get ready(): boolean {
    return this.client.status === 'ready';
  }

  /** One token from `bucket`, decided with the other takes of this turn in one script call. */
  take(bucket: string, policy: BucketPolicy, now: number): Promise<BucketDecision> {
    return new Promise((resolve, reject) => {
      // On the arithmetic's grid before it reaches the script, so script and replay agree.
      this.pending.push({ bucket, policy, now: onGrid(now), resolve, reject });
      if (this.flushScheduled) return;
      this.flushScheduled = true;
      setImmediate(this.flush);
    });
  }

  private readonly flush = (): void => {
    this.flushScheduled = false;
    const takes = this.pending;
    this.pending = [];
    for (let start = 0; start < takes.length; start += MAX_TAKES_PER_CALL) {
      this.send(takes.slice(start, start + MAX_TAKES_PER_CALL));
    }
  };

  private send(takes: PendingTake[]): void {
    const runs = runsOf(takes);
    const keysThenArgs: (string | number)[] = runs.map((run) => run.bucket);
    for (const run of runs) {
      keysThenArgs.push(run.interval, run.capacity, run.takes.length);
      for (const take of run.takes) keysThenArgs.push(take.now);
    }
    // Every take settles exactly once: a reply of the wrong shape fails every take of the call,
    // checked before any is decided, and each caller then decides alone.
    const sent = performance.now();
    this.takeTokensScript(runs.length, ...keysThenArgs)
      .then((reply) => {
        this.onCall?.((performance.now() - sent) / 1000, takes.length);
        if (!isScriptReply(reply, runs.length)) {
          throw new Error(`unexpected reply from the rate-limit script (${typeof reply})`);
        }
        runs.forEach((run, i) => {
          // The script's loop, replayed from the TAT it started the run with: the same decisions.
          let tat = reply[i] === '' ? undefined : Number(reply[i]);
          for (const take of run.takes) {
            const next = takeToken(tat, run.policy, take.now);
            tat = next.tat;
            take.resolve(next.decision);
          }
        });
      })
      .catch((error: Error) => {
        for (const take of takes) take.reject(error);
      });
  }

  async close(): Promise<void> {
    this.closing = true;
    // Takes of this turn go out ahead of QUIT on the same connection and get their answers.
    if (this.pending.length > 0) this.flush();
    try {
      await this.client.quit();
    } catch {
      this.client.disconnect();
    }
  }
}
