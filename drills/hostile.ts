import type { Drill } from './lib/types';

export const drill: Drill = { name: 'hostile', async run() { throw new Error('not written yet'); } };
