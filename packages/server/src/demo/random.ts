/**
 * A small seeded PRNG (sfc32) for the demo: deterministic, fast to reseed per record (so a record
 * is the same whatever else is generated around it), and usable as Faker's randomizer.
 * Not for anything secret: real ids and tokens come from the CSPRNG (ids.ts).
 */
import { createHash } from 'node:crypto';

export class Random {
  private a = 0;
  private b = 0;
  private c = 0;
  private d = 0;

  /** Bound, so Faker can call it detached from the instance. */
  readonly next = (): number => {
    const a = this.a >>> 0;
    const b = this.b >>> 0;
    let c = this.c >>> 0;
    const d = (this.d + 1) | 0;
    let t = (a + b) | 0;
    t = (t + d) | 0;
    this.a = b ^ (b >>> 9);
    this.b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    this.c = (c + t) | 0;
    this.d = d;
    return (t >>> 0) / 4_294_967_296;
  };

  /** Faker's Randomizer interface. */
  readonly seed = (seed: number | number[]): void => {
    const words = Array.isArray(seed) ? seed : [seed];
    this.setState(words[0] ?? 0, words[1] ?? 0x9e3779b9, words[2] ?? 0xdeadbeef, words[3] ?? 1);
  };

  /** Seeds from 16 bytes (a slice of a hash). */
  seedFromBytes(bytes: Uint8Array, offset = 0): void {
    const view = new DataView(bytes.buffer, bytes.byteOffset + offset, 16);
    this.setState(view.getUint32(0), view.getUint32(4), view.getUint32(8), view.getUint32(12));
  }

  private setState(a: number, b: number, c: number, d: number): void {
    this.a = a | 0;
    this.b = b | 0;
    this.c = c | 0;
    this.d = d | 0;
    for (let i = 0; i < 12; i++) this.next();
  }

  /** An integer from min to max, both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  float(min: number, max: number): number {
    return min + this.next() * (max - min);
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** `count` distinct items in their original order. */
  sample<T>(items: readonly T[], count: number): T[] {
    const chosen = new Set<number>();
    while (chosen.size < Math.min(count, items.length)) chosen.add(Math.floor(this.next() * items.length));
    return [...chosen].sort((x, y) => x - y).map((i) => items[i]!);
  }
}

/** SHA-256 of the parts joined unambiguously; the root of every derived id and per-record seed. */
export function digestOf(...parts: readonly (string | number)[]): Buffer {
  return createHash('sha256').update(parts.join('\u0000')).digest();
}
