/** A Faker (English) drawing from the demo's seeded PRNG, so names are reproducible per record. */
import type { Faker } from '@faker-js/faker';
import { Random } from './random.js';

export async function createDemoFaker(): Promise<{ faker: Faker; random: Random }> {
  // Loaded only by the demo: the full package is large and no other command needs it.
  const { Faker: FakerClass, en, base } = await import('@faker-js/faker');
  const random = new Random();
  return { faker: new FakerClass({ locale: [en, base], randomizer: random }), random };
}
