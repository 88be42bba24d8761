/**
 * Where a server's threads spent a measured run: for each thread, the share of the run it was on
 * a CPU and the share it was ready but waiting for one, from /proc/<pid>/task/<tid>/schedstat
 * (nanoseconds on a CPU, nanoseconds waiting in the run queue). A request thread that is neither
 * is waiting on something else (a commit, the network); one that waits for a CPU is sharing it.
 */
import { readdirSync, readFileSync } from 'node:fs';

interface ThreadTime {
  name: string;
  runNs: number;
  waitNs: number;
}

export type ThreadTimes = Map<string, ThreadTime>;

export function threadTimes(pid: number): ThreadTimes {
  const times: ThreadTimes = new Map();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const [run, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      times.set(tid, { name, runNs: run!, waitNs: wait! });
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return times;
}

export interface ThreadShare {
  thread: string;
  /** Percent of the run on a CPU. */
  cpu: number;
  /** Percent of the run ready to run but waiting for a CPU. */
  runQueue: number;
}

/** The threads that used at least 1 % of a CPU between two readings, busiest first. */
export function threadShares(before: ThreadTimes, after: ThreadTimes, seconds: number): ThreadShare[] {
  const shares: ThreadShare[] = [];
  for (const [tid, end] of after) {
    const start = before.get(tid) ?? { runNs: 0, waitNs: 0 };
    const cpu = (end.runNs - start.runNs) / (seconds * 1e7);
    if (cpu < 1) continue;
    shares.push({ thread: end.name, cpu, runQueue: (end.waitNs - start.waitNs) / (seconds * 1e7) });
  }
  return shares.sort((a, b) => b.cpu - a.cpu);
}
