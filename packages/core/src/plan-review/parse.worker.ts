import { AppError } from '../errors';
import { parsePlan } from './parse';
import type { ParsedPlan } from './plan';

export type WorkerAnswer = { plan: ParsedPlan } | { error: { status: number; detail: string } };

/** The plan parser as a worker-thread task (parse-pool.ts): its 4xx come back as data. */
export function parseTask(input: string): WorkerAnswer {
  try {
    return { plan: parsePlan(input) };
  } catch (e) {
    if (e instanceof AppError) return { error: { status: e.status, detail: e.detail } };
    throw e;
  }
}
