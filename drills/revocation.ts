import type { Drill } from './lib/types';

export const drill: Drill = { name: 'revocation', async run() { throw new Error('not written yet'); } };
