/**
 * The framework floor: Fastify, as the service builds on it, answering each route's recorded
 * response bytes from a route of its own, with the ceiling's three headers and nothing else (no
 * hooks, logger, schemas or store). Between the bare node:http ceiling and the service, it shows
 * how much of the gap is the framework's routing, request and reply objects, and how much is
 * the service's own work. Plain JavaScript, run by plain `node`, like the ceiling.
 */
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

/** @type {Record<string, { status: number, contentType: string, body: string }>} */
const responses = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const app = Fastify({ logger: false });
for (const [path, recorded] of Object.entries(responses)) {
  const bytes = Buffer.from(recorded.body, 'utf8');
  app.get(path, (_request, reply) => {
    reply
      .code(recorded.status)
      .header('content-type', recorded.contentType)
      .header('cache-control', 'no-store')
      .send(bytes);
  });
}
// A path the router did not take as written would be measured as a 404: refuse to start instead.
for (const [path, recorded] of Object.entries(responses)) {
  const answer = await app.inject(path);
  if (answer.statusCode !== recorded.status) {
    throw new Error(`the framework floor answers ${path} with ${answer.statusCode}, not ${recorded.status}`);
  }
}
await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${JSON.stringify({ port: app.server.address().port })}\n`);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
