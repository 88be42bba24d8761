/**
 * The symbol `util.inspect` looks for. Taken from the global symbol registry so the SDK needs
 * no `node:util` import (its runtime is `fetch` and `node:crypto` only).
 */
export const inspectCustom: unique symbol = Symbol.for('nodejs.util.inspect.custom') as never;
