import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BadRequest } from '../errors';
import { PLAN_LIMITS } from './limits';
import { parsePlan } from './parse';
import { ALL_CASES } from './test/pathological';

// Issue 24: no posted plan may stall the parser or run it out of memory.

const HEAD =
  'Terraform will perform the following actions:\n\n  # aws_s3_bucket.b will be created\n  + resource "aws_s3_bucket" "b" {\n';

/** Milliseconds parsePlan takes on `text` (a 400 is an answer too). */
function timeParse(text: string): number {
  const t = performance.now();
  try {
    parsePlan(text);
  } catch (e) {
    if (!(e instanceof BadRequest)) throw e;
  }
  return performance.now() - t;
}

describe('the crafted plans of issue 24 answer within a second', () => {
  it('a resource header followed by one 80,000-character line of spaces', () => {
    expect(timeParse(`  # aws_s3_bucket.b will be created\n${' '.repeat(80_000)}x\n`)).toBeLessThan(1000);
  });

  it('one line of 40,000 `ESC ]` without a BEL, in a plan', () => {
    expect(timeParse(`${HEAD}${'\x1b]'.repeat(40_000)}\n  }\n`)).toBeLessThan(1000);
  });

  it("a heredoc's closing line with a long run of spaces", () => {
    expect(timeParse(`${HEAD}      + a = <<EOT\n  x\nEOT -> a${' '.repeat(80_000)}x\n  }\n`)).toBeLessThan(
      1000,
    );
  });

  it('a 0.11 attribute forced to be replaced after a long run of spaces', () => {
    const plan = `Terraform will perform the following actions:\n\n+ aws_s3_bucket.b\n      a: "x"${' '.repeat(80_000)} (forces new resource)\n`;
    expect(timeParse(plan)).toBeLessThan(1000);
  });
});

describe('found by the generated cases', () => {
  it('a header of 20,000 " has moved to" that a U+2028 keeps from ending', () => {
    expect(timeParse(`  # a${' has moved to a'.repeat(18_000)}\u2028x will be created\n`)).toBeLessThan(1000);
  });
});

describe('time per byte is bounded over generated pathological plans', () => {
  it(`each of ${ALL_CASES.length} generated cases at 100,000 characters parses within a second`, () => {
    const slow: string[] = [];
    for (const c of ALL_CASES) {
      const ms = timeParse(c.make(100_000));
      if (ms > 1000) slow.push(`${c.name}: ${Math.round(ms)} ms`);
    }
    expect(slow).toEqual([]);
  });
});

describe('caps, each a 400 that names it', () => {
  it(`a line longer than ${PLAN_LIMITS.lineLength} characters`, () => {
    expect(() => parsePlan(`${HEAD}      + a = "${'x'.repeat(PLAN_LIMITS.lineLength)}"\n  }\n`)).toThrow(
      /line 5 is \d+ characters long, above the cap of 262144 characters/,
    );
  });

  it('a text plan nested deeper than the cap (it overflowed the stack: a 500)', () => {
    expect(() => parsePlan(HEAD + '      + a {\n'.repeat(100_000))).toThrow(
      /deeper than the cap of 64 levels \(text/,
    );
  });

  it('the 56 KB after_unknown nested 1,000 deep of issue 24', () => {
    const tree = `${'{"a":[true,'.repeat(1000)}true${']}'.repeat(1000)}`;
    const plan = `{"format_version":"1.2","resource_changes":[{"address":"aws_s3_bucket.b","type":"aws_s3_bucket","name":"b","change":{"actions":["update"],"before":{},"after":{},"after_unknown":${tree}}}]}`;
    expect(() => parsePlan(plan)).toThrow(/deeper than the cap of 64 levels \(JSON/);
  });

  it('a plan at the depth of real plans is not refused', () => {
    const tree = `${'{"a":['.repeat(25)}true${']}'.repeat(25)}`;
    const plan = `{"format_version":"1.2","resource_changes":[{"address":"aws_s3_bucket.b","type":"aws_s3_bucket","name":"b","change":{"actions":["update"],"before":{},"after":{},"after_unknown":${tree}}}]}`;
    expect(parsePlan(plan).changes[0]!.afterUnknown[0]).toHaveLength(50);
  });
});

describe('memory', () => {
  it('a 3 MB plan marking 600,000 values unknown or sensitive 60 levels deep parses in a 64 MB heap', () => {
    // A child process with a small heap: a parse that needs more dies with V8's out-of-memory abort.
    const script = `
      import { parsePlan } from ${JSON.stringify(fileURLToPath(new URL('./parse.ts', import.meta.url)))};
      const depth = 30;
      const leaves = Array(300000).fill('true').join(',');
      const tree = '{"a":['.repeat(depth) + leaves + ']}'.repeat(depth);
      const plan = '{"format_version":"1.2","resource_changes":[{"address":"aws_s3_bucket.b","type":"aws_s3_bucket","name":"b","change":{"actions":["update"],"before":{},"after":{},"after_unknown":' + tree + ',"after_sensitive":' + tree + '}}]}';
      const parsed = parsePlan(plan);
      console.log(plan.length, parsed.changes[0].afterUnknown.length, Math.round(process.memoryUsage().rss / 1048576));
    `;
    const child = spawnSync(
      process.execPath,
      ['--max-old-space-size=64', '--import', 'tsx', '--input-type=module', '-e', script],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(child.stderr).not.toMatch(/heap out of memory/);
    expect(child.status).toBe(0);
    const [bytes, unknown] = child.stdout.trim().split(' ').map(Number);
    expect(bytes).toBeGreaterThan(3_000_000);
    // The lists are cut at PLAN_LIMITS.pathElements path elements.
    expect(unknown! * 60).toBeLessThanOrEqual(PLAN_LIMITS.pathElements);
  });
});
