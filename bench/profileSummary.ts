/**
 * A V8 CPU profile (`node --cpu-prof`) as text: where the time went by self time, per function
 * and per module. The flame graph itself is the .cpuprofile file (Chrome DevTools, speedscope);
 * this is the part that fits in a terminal or a document.
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** `node_modules/fastify/lib/x.js` → `fastify`; our files by their last two path segments. */
function moduleOf(url: string, fallback: string): string {
  const inModules = url.split('node_modules/')[1];
  if (inModules) {
    const parts = inModules.split('/');
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  return url.split('/').slice(-2).join('/') || fallback;
}

function top(totals: Map<string, number>, all: number, count: number): string[] {
  return [...totals]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, time]) => `${((100 * time) / all).toFixed(1).padStart(5)} %  ${name}`);
}

export function summarizeProfile(json: string, count = 25): string {
  const profile = JSON.parse(json) as CpuProfile;
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const byFunction = new Map<string, number>();
  const byModule = new Map<string, number>();
  let all = 0;
  profile.samples.forEach((id, i) => {
    const time = profile.timeDeltas[i] ?? 0;
    all += time;
    const { functionName, url, lineNumber } = nodes.get(id)!.callFrame;
    const name = functionName || '(anonymous)';
    const where = url ? ` ${url.split('/').slice(-2).join('/')}:${lineNumber + 1}` : '';
    byFunction.set(`${name}${where}`, (byFunction.get(`${name}${where}`) ?? 0) + time);
    const module = moduleOf(url, name);
    byModule.set(module, (byModule.get(module) ?? 0) + time);
  });
  return [
    'self time by function:',
    ...top(byFunction, all, count),
    'self time by module:',
    ...top(byModule, all, Math.ceil(count / 2)),
  ].join('\n');
}
