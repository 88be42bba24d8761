/**
 * The durable audit's group commits over a measured run, read from the service's own metrics on
 * its admin listener: how many records a group carried, a group's round (from its hand-over until
 * the request thread takes its answer, `eds_audit_group_commit_seconds`) and the share of the run
 * a group was out. Groups go one after another, so a share near 100 % means each group was handed
 * over as soon as the last one was answered.
 */

export interface AuditGroupTotals {
  groups: number;
  records: number;
  seconds: number;
}

export interface AuditGroups {
  groups: number;
  recordsPerGroup: number;
  roundUs: number;
  /** Percent of the run a group was out. */
  outShare: number;
}

/** The counters since the server started. */
export async function auditGroupTotals(admin: string): Promise<AuditGroupTotals> {
  const text = await (await fetch(`${admin}/metrics`)).text();
  const value = (name: string): number => {
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return line === undefined ? 0 : Number(line.slice(name.length + 1));
  };
  return {
    groups: value('eds_audit_group_records_count'),
    records: value('eds_audit_group_records_sum'),
    seconds: value('eds_audit_group_commit_seconds_sum'),
  };
}

export function auditGroups(
  before: AuditGroupTotals,
  after: AuditGroupTotals,
  runSeconds: number,
): AuditGroups {
  const groups = after.groups - before.groups;
  const seconds = after.seconds - before.seconds;
  return {
    groups,
    recordsPerGroup: groups === 0 ? 0 : (after.records - before.records) / groups,
    roundUs: groups === 0 ? 0 : (seconds / groups) * 1e6,
    outShare: (100 * seconds) / runSeconds,
  };
}

export function describeAuditGroups(g: AuditGroups): string {
  if (g.groups === 0) return 'no group committed';
  return `${g.groups} groups, ${g.recordsPerGroup.toFixed(1)} records a group, a round of ${g.roundUs.toFixed(0)} µs, out ${g.outShare.toFixed(0)} % of the run`;
}
