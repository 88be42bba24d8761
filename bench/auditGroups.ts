/**
 * The durable audit's group commits over a measured run, read from the service's own metrics on
 * its admin listener: how many records a group carried, a group's round (from its hand-over until
 * the request thread takes its answer, `eds_audit_group_commit_seconds`) and the share of the run
 * a group was in flight. Groups go one after another, so a share near 100 % means each group was
 * handed over as soon as the last one was answered.
 */

export interface AuditGroupTotals {
  /** Groups handed over, failed ones included. */
  groups: number;
  records: number;
  /** Groups committed, whose rounds are timed (a failed group's is not). */
  timed: number;
  seconds: number;
}

export interface AuditGroups {
  groups: number;
  recordsPerGroup: number;
  /** A committed group's mean round, µs. */
  roundUs: number;
  /** Percent of the run a committed group was in flight. */
  inFlightShare: number;
}

const METRICS = {
  groups: 'eds_audit_group_records_count',
  records: 'eds_audit_group_records_sum',
  timed: 'eds_audit_group_commit_seconds_count',
  seconds: 'eds_audit_group_commit_seconds_sum',
} as const satisfies Record<keyof AuditGroupTotals, string>;

/** The counters since the server started. */
export async function auditGroupTotals(admin: string): Promise<AuditGroupTotals> {
  const response = await fetch(`${admin}/metrics`);
  if (!response.ok) throw new Error(`${admin}/metrics answered ${response.status}`);
  const lines = (await response.text()).split('\n');
  const value = (name: string): number => {
    const line = lines.find((l) => l.startsWith(`${name} `));
    // A build without the metric cannot be measured this way: better said than reported as zero.
    if (line === undefined) throw new Error(`${admin}/metrics has no ${name}`);
    return Number(line.slice(name.length + 1));
  };
  return {
    groups: value(METRICS.groups),
    records: value(METRICS.records),
    timed: value(METRICS.timed),
    seconds: value(METRICS.seconds),
  };
}

export function auditGroups(
  before: AuditGroupTotals,
  after: AuditGroupTotals,
  runSeconds: number,
): AuditGroups {
  const groups = after.groups - before.groups;
  const timed = after.timed - before.timed;
  const seconds = after.seconds - before.seconds;
  return {
    groups,
    recordsPerGroup: groups === 0 ? 0 : (after.records - before.records) / groups,
    roundUs: timed === 0 ? 0 : (seconds / timed) * 1e6,
    inFlightShare: (100 * seconds) / runSeconds,
  };
}

export function describeAuditGroups(g: AuditGroups): string {
  if (g.groups === 0) return 'no group handed over';
  return `${g.groups} groups, ${g.recordsPerGroup.toFixed(1)} records a group, a round of ${g.roundUs.toFixed(0)} µs, in flight ${g.inFlightShare.toFixed(0)} % of the run`;
}
