/**
 * A callgrind dump's instructions by function, self cost only, with V8's generated code named:
 * callgrind sees JavaScript compiled at run time as bare addresses, which the map Node writes
 * under `--perf-basic-prof-only-functions` (/tmp/perf-PID.map: start, size, name) turns back into
 * the JavaScript function and its file.
 */
import { existsSync, readFileSync } from 'node:fs';

interface CodeRange {
  start: number;
  end: number;
  name: string;
}

/** The map's entries in the order Node wrote them: code written later may reuse an address. */
function readPerfMap(file: string): CodeRange[] {
  if (!existsSync(file)) return [];
  const ranges: CodeRange[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line);
    if (!m) continue;
    const start = Number.parseInt(m[1]!, 16);
    ranges.push({ start, end: start + Number.parseInt(m[2]!, 16), name: m[3]! });
  }
  return ranges;
}

/** The JavaScript function whose code holds `address`: of several, the one written last. */
function nameAt(ranges: CodeRange[], address: number): string | undefined {
  for (let i = ranges.length - 1; i >= 0; i--) {
    const range = ranges[i]!;
    if (range.start <= address && address < range.end) return range.name;
  }
  return undefined;
}

/** Self instructions by function name in one dump (one thread's, with --separate-threads). */
export function selfCostByFunction(dumpFile: string, perfMapFile: string): Map<string, number> {
  const ranges = readPerfMap(perfMapFile);
  const names = new Map<string, string>();
  const costs = new Map<string, number>();
  /** Addresses already looked up in the perf map. */
  const named = new Map<string, string>();
  let current = '';
  // The line after `calls=` carries the callee's inclusive cost, not the caller's own.
  let skipNext = false;
  const resolve = (spec: string): string => {
    const m = /^\((\d+)\)(?: (.*))?$/.exec(spec);
    if (!m) return spec;
    if (m[2] !== undefined) names.set(m[1]!, m[2]);
    return names.get(m[1]!) ?? spec;
  };
  for (const line of readFileSync(dumpFile, 'utf8').split('\n')) {
    if (line.startsWith('fn=')) {
      // Callgrind names a function's recursive levels name'2, name'3: one function all the same.
      let name = resolve(line.slice(3)).replace(/'\d+$/, '');
      const address = /^0x([0-9a-f]+)$/.exec(name);
      if (address) {
        const known = named.get(name) ?? nameAt(ranges, Number.parseInt(address[1]!, 16)) ?? name;
        named.set(name, known);
        name = known;
      }
      current = name;
      continue;
    }
    if (line.startsWith('cfn=')) {
      resolve(line.slice(4));
      continue;
    }
    if (line.startsWith('calls=')) {
      skipNext = true;
      continue;
    }
    if (!/^[+\-*\d]/.test(line)) continue;
    if (skipNext) {
      skipNext = false;
      continue;
    }
    const cost = Number(line.trim().split(/\s+/)[1] ?? 0);
    if (cost > 0) costs.set(current, (costs.get(current) ?? 0) + cost);
  }
  return costs;
}
