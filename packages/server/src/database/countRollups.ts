/**
 * The roll-ups of each organization's listable encounters (demo/training ones are never
 * counted): per day and per hour of created_at, kept exact in the same transaction as every
 * encounter write (store/clinicalWrites.ts) and read to count a window and to place a deep list
 * offset (readModel/read/countRollups.ts).
 */
import { DAY_MS, HOUR_MS } from '../time.js';

export type CountRollup = 'day' | 'hour';

export const COUNT_ROLLUPS = {
  day: { table: 'encounter_day_counts', unitMs: DAY_MS },
  hour: { table: 'encounter_hour_counts', unitMs: HOUR_MS },
} as const satisfies Record<CountRollup, { table: string; unitMs: number }>;
