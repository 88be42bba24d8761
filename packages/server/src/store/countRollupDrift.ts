/**
 * Finds organizations whose encounter roll-ups (database/countRollups.ts) and list total disagree
 * with their encounters. Every write of this release keeps them exact in the encounters' own
 * transaction, so they drift only when something else wrote encounters: an import of an earlier
 * release run after the migration that added a roll-up, or a bulk loader. `eds migrate` rebuilds
 * those organizations (src/upgradeStore.ts).
 */
import { sql } from 'kysely';
import type { Db } from '../database/connection.js';
import { COUNT_ROLLUPS } from '../database/countRollups.js';

/**
 * The organizations whose counts drifted, sorted. Checked as a chain in one statement (one
 * snapshot): the hours against the encounters, the days against the hours, the days' running
 * totals and the total against the days. Each link that holds makes the next one exact, so the
 * whole chain holding means every count equals its encounters; only the first link reads the
 * encounters.
 */
export async function organizationsWithDriftedCounts(db: Db): Promise<string[]> {
  const { hour, day } = COUNT_ROLLUPS;
  const hourOfEncounter = sql`floor(created_at / ${sql.raw(`${hour.unitMs}.0`)})`;
  const dayOfHour = sql`floor(hour / ${sql.raw(`${day.unitMs / hour.unitMs}.0`)})`;
  const { rows } = await sql<{ organization_id: string }>`
    select organization_id from (
      select organization_id, ${hourOfEncounter} as unit, 1 as n from encounters where demo_training = 0
      union all
      select organization_id, hour, -count from ${sql.table(hour.table)}
    ) as hours_against_encounters group by organization_id, unit having sum(n) <> 0
    union
    select organization_id from (
      select organization_id, ${dayOfHour} as unit, count as n from ${sql.table(hour.table)}
      union all
      select organization_id, day, -count from ${sql.table(day.table)}
    ) as days_against_hours group by organization_id, unit having sum(n) <> 0
    union
    select organization_id from (
      select organization_id,
        earlier - (sum(count) over (partition by organization_id order by day) - count) as off
      from ${sql.table(day.table)}
    ) as earlier_against_days where off <> 0
    union
    select organization_id from (
      select organization_id, count as n from ${sql.table(day.table)}
      union all
      select organization_id, -count from encounter_counts
    ) as total_against_days group by organization_id having sum(n) <> 0
    order by organization_id`.execute(db);
  return rows.map((row) => row.organization_id);
}
