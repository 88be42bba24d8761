/**
 * `node:http`, loaded as CommonJS. An ES import of a built-in module evaluates every export for
 * its namespace, and `node:http`'s `WebSocket`, `CloseEvent` and `MessageEvent` are lazy getters
 * that load Node's bundled undici: about 3 MB of heap and 2 MB outside it that `eds serve` never
 * uses. `require` leaves the getters alone.
 */
import { createRequire } from 'node:module';

const http = createRequire(import.meta.url)('node:http') as typeof import('node:http');

export const { createServer, METHODS, request, STATUS_CODES } = http;
