/// <reference lib="dom" />
import { ApiError } from './api';
import { h } from './dom';

/** Who is signed in and what the page may offer. */
export interface Ctx {
  role: string;
  email: string;
  tenant: string;
  /** False for a viewer: no control that changes anything is shown. */
  canWrite: boolean;
  /** Goes to a console address (`/findings/…`); an old `#/…` one is read as its path. */
  go(to: string): void;
}

/** Renders into `el`; answers a cleanup (close streams, stop timers) run when the page is left. */
export type Page = (ctx: Ctx, el: HTMLElement, params: URLSearchParams) => Promise<(() => void) | void>;

/** The API's {detail}, shown where the action was. */
export function showError(target: HTMLElement, e: unknown): void {
  target.textContent = e instanceof ApiError ? e.detail : e instanceof Error ? e.message : String(e);
}

export const errorSlot = () => h('p', { class: 'error', role: 'alert' });

/** Runs an action from a button: disabled while it runs, errors shown in the slot. */
export async function act(button: HTMLButtonElement, slot: HTMLElement, fn: () => Promise<unknown>) {
  button.disabled = true;
  slot.textContent = '';
  try {
    await fn();
  } catch (e) {
    showError(slot, e);
  } finally {
    button.disabled = false;
  }
}

export const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const;
export const DOMAINS = ['finops', 'security', 'sre'] as const;
export const sevRank = (s: string) => SEVERITIES.indexOf(s as (typeof SEVERITIES)[number]);
