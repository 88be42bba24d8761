/**
 * A worker thread with a small young generation, though V8 sizes every isolate's from one
 * process-wide flag.
 */
import { setFlagsFromString } from 'node:v8';
import type { Worker } from 'node:worker_threads';

/** The thread's semi-spaces, in MB: the audit writer allocates a group's records and little else. */
const SMALL_SEMI_SPACE_MB = 1;

/**
 * Starts a thread whose V8 heap has 1 MB semi-spaces. Left to the process's flag (8 MB in the
 * image) the audit writer's young generation grows to about 8 MB under load, resident for
 * nothing; the Worker's `resourceLimits.maxYoungGenerationSizeMb` does not bound it, as V8 lets
 * the flag override it. V8 reads the flag when it builds the thread's heap, which is done once
 * the thread is `online`: the flag is put back then, to the value on the process's command line
 * (the request thread's heap was sized at start-up and does not read it again). A value given
 * only in NODE_OPTIONS is not read back: a thread started later would get V8's default, and the
 * service starts no other. The caller keeps its own `error` listener: the one added here would
 * otherwise keep a thread's failure from being thrown.
 */
export function withSmallYoungGeneration(start: () => Worker): Worker {
  if (threadsBeingBuilt++ === 0) setFlagsFromString(`--max-semi-space-size=${SMALL_SEMI_SPACE_MB}`);
  let built = false;
  const done = () => {
    if (built) return;
    built = true;
    if (--threadsBeingBuilt === 0) restoreSemiSpaceFlag();
  };
  let worker: Worker;
  try {
    worker = start();
  } catch (error) {
    done();
    throw error;
  }
  worker.once('online', done);
  worker.once('error', done);
  worker.once('exit', done);
  return worker;
}

/** Threads started whose heap V8 has not built yet: the flag is put back when none is left. */
let threadsBeingBuilt = 0;

const SEMI_SPACE_FLAG = /^--max[-_]semi[-_]space[-_]size(?:=(.*))?$/;

/** The command line's `--max-semi-space-size` (where the image sets it), or 0, V8's default. */
function restoreSemiSpaceFlag(): void {
  let megabytes = '0';
  process.execArgv.forEach((arg, i) => {
    const flag = SEMI_SPACE_FLAG.exec(arg);
    if (flag) megabytes = flag[1] ?? process.execArgv[i + 1] ?? megabytes;
  });
  setFlagsFromString(`--max-semi-space-size=${megabytes}`);
}
