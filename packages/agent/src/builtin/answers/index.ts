import type { Intent } from '../parse';
import type { Handler } from './common';
import { changes, incident } from './events';
import { finding, fix, openFindings, pick, savings } from './findings';
import { help, learnings, runbook, unknown } from './knowledge';
import { blast, costs, count, neighbours, resource, risks } from './resources';

export type { Ctx, Handler } from './common';

/** The plan and answer of each intent of the intent table (./parse INTENTS). */
export const HANDLERS: Record<Intent, Handler> = {
  help,
  open: openFindings,
  savings,
  costs,
  count,
  resource,
  neighbours,
  blast,
  risks,
  incident,
  changes,
  learnings,
  runbook,
  fix,
  finding,
  pick,
  unknown,
};
