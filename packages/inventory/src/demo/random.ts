import { createHash } from 'node:crypto';
import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';

function hash32(text: string): number {
  return createHash('sha256').update(text).digest().readInt32BE(0);
}

/** A deterministic random stream: the same seed and name always give the same sequence. */
export class Random {
  private readonly rng;

  constructor(seed: number, stream: string) {
    this.rng = xoroshiro128plus(hash32(`${seed}:${stream}`));
  }

  int(from: number, to: number): number {
    return uniformInt(this.rng, from, to);
  }

  float(): number {
    return uniformFloat64(this.rng);
  }

  between(from: number, to: number): number {
    return from + (to - from) * this.float();
  }

  chance(p: number): boolean {
    return this.float() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)]!;
  }
}

/** A stable hex id for a logical resource: the same in every size, day and run of the same seed. */
export function hexId(seed: number, key: string, length: number): string {
  return createHash('sha1').update(`${seed}|${key}`).digest('hex').slice(0, length);
}

/** A stable 12-digit AWS account id. */
export function accountId(seed: number, name: string): string {
  const digits = BigInt(`0x${hexId(seed, `account:${name}`, 15)}`)
    .toString()
    .padStart(12, '7');
  return digits.slice(-12).replace(/^0/, '4');
}
