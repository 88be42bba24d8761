/**
 * The connection bound's choice of what to close, on real loopback sockets: the connection idle
 * longest, where idle time starts when a connection's last request is answered; never one with a
 * request in flight, and never a connection that is already gone.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { ConnectionLimit } from '../../src/http/connectionLimit.js';
import { createLogger } from '../../src/logger.js';
import { createMetrics } from '../../src/metrics.js';
import { waitFor } from '../support/waitFor.js';

let server: Server;
const accepted: Socket[] = [];
const clients: Socket[] = [];

before(async () => {
  server = createServer((socket) => accepted.push(socket));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
});

after(async () => {
  for (const socket of [...clients, ...accepted]) socket.destroy();
  server.close();
});

/** A server-side socket of a fresh loopback connection. */
async function serverSocket(): Promise<Socket> {
  const known = accepted.length;
  const { port } = server.address() as { port: number };
  clients.push(connect(port, '127.0.0.1'));
  await waitFor(() => accepted.length > known, 'the connection to be accepted');
  return accepted[accepted.length - 1]!;
}

function limitOf(max: number): ConnectionLimit {
  return new ConnectionLimit(max, createMetrics(), createLogger('silent'), () => 0);
}

test('happy: at the bound the connection idle longest is closed, counted from its last answer', async () => {
  const limit = limitOf(3);
  const [a, b, c] = [await serverSocket(), await serverSocket(), await serverSocket()];
  for (const socket of [a, b, c]) limit.admit(socket, 'api');
  // a answers a request after b and c became idle: b is now the longest idle, then c, then a.
  limit.requestStarted(a);
  limit.requestEnded(a);

  limit.admit(await serverSocket(), 'api');
  assert.ok(b.destroyed, 'the longest idle is closed');
  assert.ok(!a.destroyed && !c.destroyed);
  limit.admit(await serverSocket(), 'media');
  assert.ok(c.destroyed, 'then the next longest idle');
  assert.ok(!a.destroyed);
  assert.equal(limit.size, 3);
});

test('happy: a connection with a request in flight is never closed; the newcomer is, when every other is busy', async () => {
  const limit = limitOf(2);
  const [a, b] = [await serverSocket(), await serverSocket()];
  limit.admit(a, 'api');
  limit.admit(b, 'api');
  limit.requestStarted(a);
  limit.requestStarted(b);
  limit.requestStarted(b); // pipelined: b stays busy until both are answered
  limit.requestEnded(b);

  const newcomer = await serverSocket();
  limit.admit(newcomer, 'api');
  assert.ok(!a.destroyed && !b.destroyed, 'busy connections are kept');
  assert.ok(newcomer.destroyed, 'with nothing idle, the newcomer goes');

  limit.requestEnded(b);
  limit.admit(await serverSocket(), 'api');
  assert.ok(b.destroyed, 'once answered, b is idle and the first to go');
  assert.ok(!a.destroyed);
});

test('happy: a connection that closed by itself leaves the idle order', async () => {
  const limit = limitOf(2);
  const [a, b] = [await serverSocket(), await serverSocket()];
  limit.admit(a, 'api');
  limit.admit(b, 'api');
  a.destroy();
  await waitFor(() => limit.size === 1, 'the closed connection to be forgotten');

  const c = await serverSocket();
  limit.admit(c, 'api');
  assert.ok(!b.destroyed && !c.destroyed, 'room was left by the closed one');
  limit.admit(await serverSocket(), 'api');
  assert.ok(b.destroyed, 'b, idle longest of the open ones, goes next');
  assert.ok(!c.destroyed);
});

test('happy: a connection taken from the middle of the idle order rejoins it at the end', async () => {
  const limit = limitOf(3);
  const [a, b, c] = [await serverSocket(), await serverSocket(), await serverSocket()];
  for (const socket of [a, b, c]) limit.admit(socket, 'api');
  limit.requestStarted(b);
  limit.requestEnded(b); // idle order now a, c, b

  limit.admit(await serverSocket(), 'api');
  assert.ok(a.destroyed && !b.destroyed && !c.destroyed, 'a first');
  limit.admit(await serverSocket(), 'api');
  assert.ok(c.destroyed && !b.destroyed, 'then c, not b');
});

test('happy: a busy connection that closes is forgotten, and its late answer changes nothing', async () => {
  const limit = limitOf(2);
  const [a, b] = [await serverSocket(), await serverSocket()];
  limit.admit(a, 'api');
  limit.admit(b, 'api');
  limit.requestStarted(a);
  a.destroy();
  await waitFor(() => limit.size === 1, 'the closed connection to be forgotten');
  limit.requestEnded(a);
  assert.equal(limit.size, 1);

  const c = await serverSocket();
  limit.admit(c, 'api');
  assert.ok(!b.destroyed && !c.destroyed, 'room was left by the closed one');
});

test('happy: a connection admitted twice is tracked once', async () => {
  const limit = limitOf(2);
  const [a, b] = [await serverSocket(), await serverSocket()];
  limit.admit(a, 'api');
  limit.admit(a, 'api');
  limit.admit(b, 'api');
  assert.equal(limit.size, 2);
  limit.admit(await serverSocket(), 'api');
  assert.ok(a.destroyed && !b.destroyed, 'the bound is kept by closing a once');
  assert.equal(limit.size, 2);
  limit.admit(await serverSocket(), 'api');
  assert.ok(b.destroyed, 'then b: nothing of a is left in the idle order');
  assert.equal(limit.size, 2);
});
