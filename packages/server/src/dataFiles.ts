/** Where a deployment keeps what holds patient data or secrets, for the start-up check of its modes. */
import { join } from 'node:path';
import type { Config } from './config.js';

/** The files and folders of a deployment that hold patient data or secrets, where they may be. */
export function dataFilesOf(config: Pick<Config, 'database' | 'dataDir' | 'media'>): string[] {
  const paths = [config.dataDir, join(config.dataDir, 'secrets.json')];
  const { database, media } = config;
  if (database.dialect === 'sqlite' && database.path !== ':memory:') {
    paths.push(...['', '-wal', '-shm', '-journal'].map((suffix) => database.path + suffix));
  }
  if (media.storage.driver === 'local') paths.push(media.storage.dir);
  return paths;
}
