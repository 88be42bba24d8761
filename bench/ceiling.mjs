/**
 * The ceiling: a raw node:http server answering each route's recorded response bytes, with no
 * routing, authentication or store. Run under the same load generator in the same run, it shows
 * what Node itself can do on this machine for the same bytes. Plain JavaScript, run by plain
 * `node`: no loader or type stripping in the process it measures (`npm run bench:memory` reports
 * its memory as the floor).
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

/** @type {Record<string, { status: number, contentType: string, body: string }>} */
const responses = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const bodies = new Map(
  Object.entries(responses).map(([path, r]) => [path, { ...r, bytes: Buffer.from(r.body, 'utf8') }]),
);

const server = createServer((req, res) => {
  const hit = bodies.get(req.url ?? '');
  if (!hit) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(hit.status, {
    'Content-Type': hit.contentType,
    'Content-Length': hit.bytes.length,
    'Cache-Control': 'no-store',
  });
  res.end(hit.bytes);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
