/** A thread's V8 heap size limit, which counts its young generation: how tests read its size. */
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';

const REPORT_LIMIT = `require('node:worker_threads').parentPort.postMessage(require('node:v8').getHeapStatistics().heap_size_limit)`;

/** A thread that reports its heap size limit and nothing else. */
export const plainThread = () => new Worker(REPORT_LIMIT, { eval: true });

export async function heapLimitOf(worker: Worker): Promise<number> {
  const [limit] = (await once(worker, 'message')) as [number];
  await worker.terminate();
  return limit;
}
