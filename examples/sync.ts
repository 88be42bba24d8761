/**
 * Incremental sync of encounters, resumable and tolerant of the API's lack of a snapshot.
 *
 *   EDS_BASE_URL=... EDS_API_KEY=... node --import tsx examples/sync.ts \
 *     [--checkpoint eds-sync.checkpoint.json] [--out encounters.ndjson] \
 *     [--since 2026-01-01T00:00:00Z] [--window-hours 24] [--overlap-minutes 10]
 *
 * How it works:
 * - Pages by created_at windows in ascending order: [cursor - overlap, cursor + window).
 *   Ascending order means encounters created while we read land after our position.
 * - Offset paging has no snapshot: an insert or delete inside a window shifts offsets, so an
 *   item can repeat or slip past. Every window therefore re-reads the last `overlap` of the
 *   previous one, and encounters are deduplicated by encounter_id (the ids seen inside the
 *   overlap are kept in the checkpoint).
 * - After each window the checkpoint (cursor + recent ids) is written atomically, so a crash
 *   or Ctrl-C resumes from the last finished window. Records are appended before the
 *   checkpoint, so after a crash some may be written twice: consumers upsert by encounter_id.
 * - The list is ordered by created_at; later edits to old encounters (updated_at) are not
 *   picked up by created_at windows. Use the webhook, or a periodic full re-sync, for those.
 */
import { appendFileSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { EdsApiError, EncounterDataClient } from '@eds/sdk';
import { option, required } from './args.js';

interface Checkpoint {
  /** Everything created before this instant has been read. */
  cursor: string;
  /** encounter_id → created_at of encounters read within the overlap before the cursor. */
  recent: Record<string, string>;
}

const HOUR = 3_600_000;
const MINUTE = 60_000;

const client = new EncounterDataClient({
  baseUrl: required('base-url', 'EDS_BASE_URL'),
  apiKey: required('api-key', 'EDS_API_KEY'),
});
const checkpointFile = option('checkpoint', 'EDS_SYNC_CHECKPOINT', 'eds-sync.checkpoint.json')!;
const outFile = option('out', 'EDS_SYNC_OUT', 'encounters.ndjson')!;
const windowMs = Number(option('window-hours', undefined, '24')) * HOUR;
const overlapMs = Number(option('overlap-minutes', undefined, '10')) * MINUTE;
const until = Date.parse(option('until', undefined) ?? new Date().toISOString());

function loadCheckpoint(): Checkpoint | undefined {
  if (!existsSync(checkpointFile)) return undefined;
  return JSON.parse(readFileSync(checkpointFile, 'utf8')) as Checkpoint;
}

function saveCheckpoint(checkpoint: Checkpoint): void {
  // Write then rename: a crash never leaves a half-written checkpoint.
  const temporary = `${checkpointFile}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(checkpoint, null, 2)}\n`);
  renameSync(temporary, checkpointFile);
}

/** Where a first run starts: --since, or the oldest encounter the key can see. */
async function firstCursor(): Promise<number | undefined> {
  const since = option('since', 'EDS_SYNC_SINCE');
  if (since) return Date.parse(since);
  const oldest = await client.listEncounters({ sort_order: 'asc', limit: 1 });
  return oldest.items[0] ? Date.parse(oldest.items[0].created_at) : undefined;
}

async function main(): Promise<void> {
  let checkpoint = loadCheckpoint();
  if (!checkpoint) {
    const start = await firstCursor();
    if (start === undefined) {
      console.error('No encounters visible to this key yet.');
      return;
    }
    checkpoint = { cursor: new Date(start).toISOString(), recent: {} };
  }
  let written = 0;
  let duplicates = 0;
  let cursor = Date.parse(checkpoint.cursor);
  const recent = new Map(Object.entries(checkpoint.recent));

  while (cursor < until) {
    const end = Math.min(cursor + windowMs, until);
    const window = {
      sort_order: 'asc' as const,
      start_at: new Date(cursor - overlapMs),
      end_at: new Date(end),
    };
    const lines: string[] = [];
    for await (const encounter of client.iterateEncounters(window)) {
      if (recent.has(encounter.encounter_id)) {
        duplicates++;
        continue;
      }
      recent.set(encounter.encounter_id, encounter.created_at);
      lines.push(JSON.stringify(encounter));
    }
    if (lines.length > 0) appendFileSync(outFile, `${lines.join('\n')}\n`);
    written += lines.length;
    cursor = end;
    // Keep only the ids the next window's overlap can meet again.
    for (const [id, createdAt] of recent) if (Date.parse(createdAt) < cursor - overlapMs) recent.delete(id);
    saveCheckpoint({ cursor: new Date(cursor).toISOString(), recent: Object.fromEntries(recent) });
  }
  console.error(
    `sync: ${written} new encounters, ${duplicates} duplicates skipped, cursor ${new Date(cursor).toISOString()}`,
  );
}

main().catch((error: unknown) => {
  if (error instanceof EdsApiError) {
    // reasonCode and requestId are what support needs; retryable says whether to just run again.
    console.error(`sync stopped: ${error.status} ${error.reasonCode} (request ${error.requestId ?? 'n/a'})`);
    console.error(
      error.retryable ? 'Transient: run again later to resume.' : 'Fix the cause, then run again to resume.',
    );
  } else {
    console.error('sync stopped:', error);
  }
  process.exitCode = 1;
});
