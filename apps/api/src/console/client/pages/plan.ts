/// <reference lib="dom" />
import { get, post } from '../api';
import { card, clear, command, h, pill, when } from '../dom';
import { act, errorSlot, type Page } from '../ctx';
import type { PlanStepT, PlanT } from '../types';

const BUSY = new Set(['generating', 'finalizing']);

/** The resolution plan wizard: steps in order, each verified, confirmed or skipped, then finalize. */
export const planPage: Page = async (ctx, el, params) => {
  const id = params.get('id')!;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const body = h('div', {});
  el.append(body);

  const refresh = async () => {
    const plan = await get<PlanT>(`/api/pulse/plans/${id}`);
    if (stopped) return;
    render(plan);
    const pending = BUSY.has(plan.status) || plan.steps.some((s) => s.status === 'verifying');
    clearTimeout(timer);
    if (pending) timer = setTimeout(() => void refresh().catch(() => undefined), 700);
  };

  function render(plan: PlanT) {
    const slot = errorSlot();
    const doneStates = new Set(['verified', 'confirmed', 'skipped']);
    const others = plan.steps.filter((s) => !s.final);
    const ready = others.every((s) => doneStates.has(s.status));
    const finalize = h(
      'button',
      { type: 'button', 'data-action': 'finalize', disabled: !ready || plan.status !== 'ready' },
      'Finalize: re-run the detection',
    );
    finalize.addEventListener('click', () =>
      act(finalize, slot, async () => {
        await post(`/api/pulse/plans/${id}/finalize`);
        await refresh();
      }),
    );
    clear(
      body,
      h(
        'p',
        { class: 'crumbs' },
        h('a', { href: `/findings/${plan.finding_id}` }, 'Finding'),
        ' / resolution plan',
      ),
      h('h1', {}, 'Resolution plan'),
      h(
        'p',
        { class: 'meta' },
        'Status ',
        h(
          'span',
          { 'data-plan-status': plan.status },
          pill(plan.status, plan.status === 'resolved' ? 'resolved' : plan.status),
        ),
        plan.stale ? pill('stale: the finding changed', 'medium') : null,
        ` · ${plan.engine} · attempt ${plan.attempt} · updated ${when(plan.updated_at)}`,
      ),
      plan.status === 'generating' ? h('p', { class: 'loading', role: 'status' }, 'Writing the plan…') : null,
      plan.error ? h('p', { class: 'error', role: 'alert' }, plan.error) : null,
      plan.final_check
        ? h(
            'section',
            { class: `card outcome ${plan.final_check.outcome}`, 'data-outcome': plan.final_check.outcome },
            h('h2', {}, plan.final_check.outcome === 'resolved' ? 'Resolved' : 'Still present'),
            h('p', {}, plan.final_check.summary),
            h('p', { class: 'note' }, when(plan.final_check.at)),
          )
        : null,
      slot,
      h(
        'ol',
        { class: 'wizard' },
        plan.steps.map((s) => step(plan, s)),
      ),
      ctx.canWrite && plan.status !== 'resolved' && plan.status !== 'generating'
        ? card(
            'Finish',
            h(
              'p',
              { class: 'note' },
              ready
                ? 'Every step is done: finalize re-runs the detection on the cluster.'
                : 'Finalize once every other step is verified, confirmed or skipped.',
            ),
            finalize,
            plan.status === 'failed' || plan.final_check?.outcome === 'still_present'
              ? regenerateButton()
              : null,
          )
        : null,
    );
  }

  function regenerateButton() {
    const slot = errorSlot();
    const b = h('button', { type: 'button', class: 'secondary' }, 'Regenerate the plan');
    b.addEventListener('click', () =>
      act(b, slot, async () => {
        await post(`/api/pulse/plans/${id}/regenerate`);
        await refresh();
      }),
    );
    return h('span', {}, ' ', b, slot);
  }

  function step(plan: PlanT, s: PlanStepT) {
    const slot = errorSlot();
    const controls = h('div', { class: 'actions' });
    const open =
      !['verified', 'confirmed', 'skipped', 'verifying'].includes(s.status) && plan.status === 'ready';
    if (ctx.canWrite && open && !s.final) {
      if (s.verification) {
        const b = h('button', { type: 'button', 'data-step-action': 'verify' }, 'Verify');
        b.addEventListener('click', () =>
          act(b, slot, async () => {
            await post(`/api/pulse/plans/${id}/steps/${s.seq}/verify`);
            await refresh();
          }),
        );
        controls.append(b);
      }
      const c = h(
        'button',
        { type: 'button', class: 'secondary', 'data-step-action': 'confirm' },
        'Mark done',
      );
      c.addEventListener('click', () =>
        act(c, slot, async () => {
          await post(`/api/pulse/plans/${id}/steps/${s.seq}/confirm`);
          await refresh();
        }),
      );
      const reason = h('input', {
        name: 'reason',
        'aria-label': `Reason to skip step ${s.seq}`,
        placeholder: 'Why skip? (3–500 characters)',
        maxlength: '500',
      });
      const k = h('button', { type: 'button', class: 'secondary', 'data-step-action': 'skip' }, 'Skip');
      k.addEventListener('click', () =>
        act(k, slot, async () => {
          await post(`/api/pulse/plans/${id}/steps/${s.seq}/skip`, { reason: reason.value });
          await refresh();
        }),
      );
      controls.append(c, h('span', { class: 'skip' }, reason, k));
    }
    return h(
      'li',
      { class: `step ${s.status}`, 'data-step': String(s.seq), 'data-step-status': s.status },
      h(
        'div',
        { class: 'step-head' },
        h('strong', {}, `Step ${s.seq}. ${s.title}`),
        ' ',
        pill(s.status, s.status),
        s.final ? pill('final check', 'info') : null,
      ),
      h('p', {}, s.instructions),
      s.fix_command
        ? h(
            'div',
            {},
            h('h3', {}, 'Fix command (run it yourself: the service never executes it)'),
            command(s.fix_command.command, 'never executed by the service'),
          )
        : null,
      s.verification
        ? h(
            'div',
            {},
            h('h3', {}, s.final ? 'Detection re-run' : 'Verification (read-only)'),
            h('pre', { class: 'sql' }, s.verification.command),
            h('p', { class: 'note' }, `Done when: ${s.verification.done_when}`),
          )
        : null,
      s.how_to_confirm ? h('p', { class: 'note' }, s.how_to_confirm) : null,
      s.last_check
        ? h(
            'p',
            { class: `check ${s.last_check.outcome}` },
            `Last check ${when(s.last_check.at)}: ${s.last_check.outcome}. `,
            h('code', {}, s.last_check.output_preview),
          )
        : null,
      s.skip_reason ? h('p', { class: 'note' }, `Skipped: ${s.skip_reason}`) : null,
      s.done_by ? h('p', { class: 'note' }, `Done by ${s.done_by} at ${when(s.done_at)}`) : null,
      controls,
      slot,
    );
  }

  await refresh();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
};
