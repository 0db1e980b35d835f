import type { MessagePort } from 'node:worker_threads';
import { AppError } from '../errors';
import { parsePlan } from './parse';
import type { ParsedPlan } from './plan';

export type WorkerAnswer = { plan: ParsedPlan } | { error: { status: number; detail: string } };

export interface ParseTask {
  input: string;
  /** Told when the parse begins, so that its time limit counts the parse, not the thread's start or the queue. */
  started: MessagePort;
}

/** The plan parser as a worker-thread task (parse-pool.ts): its 4xx come back as data. */
export function parseTask({ input, started }: ParseTask): WorkerAnswer {
  started.postMessage(0);
  started.close();
  try {
    return { plan: parsePlan(input) };
  } catch (e) {
    if (e instanceof AppError) return { error: { status: e.status, detail: e.detail } };
    throw e;
  }
}
