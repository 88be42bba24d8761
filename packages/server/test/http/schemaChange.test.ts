/**
 * Operators run `eds migrate` before restarting the API processes, so a running process sees
 * columns appear under statements it has already prepared. What it answers must not change.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { openStore } from '../../src/database/connection.js';
import { useServerWithWorld } from '../support/serverWithWorld.js';
import { forEachStore } from '../support/stores.js';
import { pathFor } from '../support/world.js';

forEachStore('schema change under a running API', (kind) => {
  const given = useServerWithWorld(kind);

  test('happy: columns added by another connection leave every read route’s answers as they were', async () => {
    const paths = [
      '/external/v1/encounters?limit=50',
      pathFor('getEncounter', given.world),
      pathFor('getDocument', given.world),
      pathFor('getTranscript', given.world),
    ];
    const before = [];
    for (const path of paths) before.push(await given.server.api.get(path, { token: given.world.token }));
    assert.ok(before.every((r) => r.status === 200));

    // Another process migrates: a column with a default in front of nothing, on every table read.
    const other = openStore(given.server.database.config);
    try {
      for (const table of ['encounters', 'patients', 'documents', 'transcripts', 'recordings']) {
        await sql`ALTER TABLE ${sql.table(table)} ADD COLUMN added_later TEXT DEFAULT 'x'`.execute(other.db);
      }
    } finally {
      await other.close();
    }

    for (const [i, path] of paths.entries()) {
      const after = await given.server.api.get(path, { token: given.world.token });
      assert.equal(after.status, 200, `${path}: ${JSON.stringify(after.body)}`);
      const strip = (body: unknown) =>
        JSON.parse(JSON.stringify(body).replaceAll(/"expires_at":"[^"]*"/g, ''));
      assert.deepEqual(strip(after.body), strip(before[i]!.body), path);
    }
  });
});
