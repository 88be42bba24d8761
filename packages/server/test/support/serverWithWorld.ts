/**
 * The usual start of an API test file or suite: a test server on a fresh database of the given
 * kind, with the standard world in it (and its recording in media storage), started before the
 * suite's tests and closed after them.
 */
import { after, before } from 'node:test';
import { startTestServer, type TestServer, type TestServerOptions } from './server.js';
import type { StoreKind } from './stores.js';
import { buildWorld, type World } from './world.js';

export interface ServerWithWorld {
  /** Set once the suite's `before` hooks have run. */
  readonly server: TestServer;
  readonly world: World;
}

/**
 * Registers the suite's `before`/`after` hooks; call it at the top of a file or a `describe`.
 * `setUp` runs in the same `before` hook once the world is built: at a file's top level Node
 * starts each `before` hook as it is registered, so a second hook there would not wait for this one.
 */
export function useServerWithWorld(
  kind: StoreKind,
  options: TestServerOptions = {},
  setUp?: (given: ServerWithWorld) => Promise<void>,
): ServerWithWorld {
  let server: TestServer | undefined;
  let world: World | undefined;
  const given: ServerWithWorld = {
    get server() {
      if (!server) throw new Error('the test server is not started yet (used outside a test?)');
      return server;
    },
    get world() {
      if (!world) throw new Error('the world is not built yet (used outside a test?)');
      return world;
    },
  };
  before(async () => {
    server = await startTestServer(kind, options);
    world = await buildWorld(server.fixtures, server.putObject);
    await setUp?.(given);
  });
  after(() => server?.close());
  return given;
}
