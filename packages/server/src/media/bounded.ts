/**
 * Storage calls on the request path are bounded: a stuck disk or an object store that accepts
 * connections and never answers must become a prompt 503, not a request that hangs.
 */
import { StorageUnavailableError } from './storage.js';

/**
 * Runs `work` with an abort signal; after `timeoutMs` the signal aborts and the call rejects with
 * StorageUnavailableError whether or not `work` honours the signal. A result that arrives too
 * late is handed to `discardLate` (e.g. to close a file it opened).
 */
export function withinStorageTimeout<T>(
  timeoutMs: number,
  what: string,
  work: (signal: AbortSignal) => Promise<T>,
  discardLate?: (value: T) => void,
): Promise<T> {
  const controller = new AbortController();
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      settled = true;
      controller.abort();
      reject(new StorageUnavailableError(`${what} did not answer within ${timeoutMs} ms`));
    }, timeoutMs);
    work(controller.signal).then(
      (value) => {
        if (settled) {
          discardLate?.(value);
          return;
        }
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
