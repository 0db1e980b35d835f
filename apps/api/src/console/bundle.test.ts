import { describe, expect, it } from 'vitest';
import { consoleBuildOptions } from './bundle';

describe('the console bundle', () => {
  it('is built by `npm run build` with the options the service bundles with in development', async () => {
    // @ts-expect-error scripts/build.mjs is plain JavaScript without declarations
    const { consoleOptions } = (await import('../../../../scripts/build.mjs')) as {
      consoleOptions: (outdir: string) => unknown;
    };
    expect(consoleOptions('/tmp/out')).toEqual(consoleBuildOptions('/tmp/out'));
  });
});
