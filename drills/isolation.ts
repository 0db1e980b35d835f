import type { Drill } from './lib/types';

export const drill: Drill = { name: 'isolation', async run() { throw new Error('not written yet'); } };
