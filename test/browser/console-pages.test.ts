/// <reference lib="dom" />
// The web console in Debian's headless Chromium against the real API and worker on the demo environment:
// every page, its figures compared with the API's, and the actions a user takes, each through the
// browser session and its CSRF header. Each page leaves a screenshot in docs/screenshots/.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordSnsSubscription, type SnsMessage } from '@opsi/core';
import { call, readSse } from '@opsi/test-support';
import {
  open,
  screenshot,
  signIn,
  startConsoleWorld,
  type ConsolePage,
  type ConsoleWorld,
} from './console-setup';

let world: ConsoleWorld | undefined;
let cp: ConsolePage;
const page = () => cp.page;
const money = (n: number) =>
  '$' + n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

beforeAll(async () => {
  world = await startConsoleWorld();
  cp = await signIn(world, world.member);
}, 180_000);

afterAll(async () => {
  await world?.close();
});

describe('the web console, signed in as the tenant owner', () => {
  it('overview: the figures are the API’s, with the chart, the last scan and the top clusters', async () => {
    const w = world!;
    await page().locator('#page[data-route="/overview"]').waitFor();
    const o = await w.apiGet('/api/v1/pulse/overview');
    const figure = (id: string) => page().locator(`[data-figure=${id}] .value`).textContent();
    expect(await figure('open_findings')).toBe(String(o.open_findings));
    expect(o.open_findings).toBeGreaterThan(10);
    expect(await figure('savings_open')).toBe(`${money(o.estimated_savings.monthly)}/mo`);
    expect(await figure('savings_realized')).toBe(`${money(o.realized_savings.total)}/mo`);
    expect(await figure('last_scan')).toBe(o.coverage.last_scan.status);
    for (const [domain, n] of Object.entries(o.by_domain))
      expect(await page().locator(`[data-bars=domain] li[data-key=${domain}] .count`).textContent()).toBe(
        String(n),
      );
    for (const [sev, n] of Object.entries(o.by_severity))
      expect(await page().locator(`[data-bars=severity] li[data-key=${sev}] .count`).textContent()).toBe(
        String(n),
      );
    await page().locator('.chart canvas').waitFor();
    expect(await page().locator('[data-table=clusters] tbody tr').count()).toBeGreaterThan(2);
    await screenshot(page(), 'console-overview');
  });

  it('findings: filter by domain, sort by savings, change a status (PATCH with the CSRF header)', async () => {
    const w = world!;
    await open(page(), '#/findings?domain=finops&sort_by=savings');
    const api = await w.apiGet('/api/v1/pulse/findings?domain=finops&sort_by=savings');
    const rows = page().locator('[data-table=findings] tbody tr');
    expect(await rows.count()).toBe(api.findings.length);
    expect(await rows.first().getAttribute('data-finding-id')).toBe(api.findings[0].id);
    // The filter form drives the address.
    await page().selectOption('select[name=domain]', 'security');
    await page().locator('#page[data-route="/findings?domain=security&sort_by=savings"]').waitFor();
    const security = await w.apiGet('/api/v1/pulse/findings?domain=security&sort_by=savings');
    expect(await rows.count()).toBe(security.findings.length);
    await screenshot(page(), 'console-findings');

    const target = security.findings.find((f: { status: string }) => f.status === 'open');
    const patched = page().waitForResponse((r) =>
      r.url().endsWith(`/console/api/pulse/findings/${target.id}/status`),
    );
    await page().selectOption(`[data-status-of="${target.id}"]`, 'acknowledged');
    const res = await patched;
    expect(res.status()).toBe(200);
    expect(res.request().headers()['x-csrf-token']).toBeTruthy();
    expect((await w.apiGet(`/api/v1/pulse/findings/${target.id}`)).status).toBe('acknowledged');
    await page().selectOption(`[data-status-of="${target.id}"]`, 'open');
    await expect
      .poll(async () => (await w.apiGet(`/api/v1/pulse/findings/${target.id}`)).status)
      .toBe('open');
  });

  it('a finding: resources with console links, the evidence trail with its query, Run again shows the live result', async () => {
    const w = world!;
    const list = await w.apiGet('/api/v1/pulse/findings?domain=sre');
    const f = list.findings[0];
    await open(page(), `#/findings/${f.id}`);
    const detail = await w.apiGet(`/api/pulse/findings/${f.id}`);
    expect(await page().locator('h1').textContent()).toBe(detail.title);
    expect(await page().locator('[data-table=resources] tbody tr').count()).toBe(detail.resources.length);
    const link = detail.resources.find((r: { console_url: string | null }) => r.console_url);
    expect(await page().locator(`a[href="${link.console_url}"]`).count()).toBe(1);
    const audit = await w.apiGet(`/api/pulse/findings/${f.id}/audit`);
    expect(await page().locator('[data-list=evidence] > li').count()).toBe(audit.steps.length);
    const step = audit.steps.find((s: { rerunnable: boolean }) => s.rerunnable);
    const li = page().locator(`[data-list=evidence] > li[data-seq="${step.seq}"]`);
    await li.locator('summary', { hasText: 'The exact query' }).click();
    expect(await li.locator('pre.sql').textContent()).toBe(step.query_sql);
    await li.locator('[data-rerun]').click();
    const verdict = li.locator('[data-differs]');
    await verdict.waitFor();
    // Nothing changed in the environment since the scan: the live result is the recorded one.
    expect(await verdict.getAttribute('data-differs')).toBe('false');
    expect(await verdict.textContent()).toContain(`Same as recorded: ${step.row_count} rows`);
    expect(await page().locator('[data-list=history] li').count()).toBe(detail.group.history.length);
    await screenshot(page(), 'console-finding');
  });

  it('the resolution plan wizard: fix with demo exec, verify, confirm, finalize: resolved', async () => {
    const w = world!;
    const list = await w.apiGet('/api/v1/pulse/findings?domain=security');
    const f = list.findings.find((x: { check_id: string }) => x.check_id.startsWith('security.sg_'));
    await open(page(), `#/findings/${f.id}`);
    await page().click('[data-action=plan]');
    await page().waitForURL(/\/plans\//);
    const planId = page().url().split('/plans/')[1]!;
    await page().locator('[data-plan-status=ready]').waitFor({ timeout: 60_000 });
    const plan = await w.apiGet(`/api/pulse/plans/${planId}`);
    for (const step of plan.steps.filter((s: { final: boolean }) => !s.final)) {
      const li = page().locator(`li[data-step="${step.seq}"]`);
      if (step.fix_command) {
        expect(await li.locator('.command code').textContent()).toBe(step.fix_command.command);
        expect(await li.textContent()).toContain('never executed by the service');
        await w.demoExec(step.fix_command.command);
      }
      if (step.verification) await li.locator('[data-step-action=verify]').click();
      else await li.locator('[data-step-action=confirm]').click();
      await expect
        .poll(() => li.getAttribute('data-step-status'), { timeout: 30_000 })
        .toMatch(/^(verified|confirmed)$/);
      expect(await li.getAttribute('data-step-status')).toBe(step.verification ? 'verified' : 'confirmed');
    }
    await screenshot(page(), 'console-plan');
    await page().click('[data-action=finalize]');
    await page().locator('[data-outcome=resolved]').waitFor({ timeout: 60_000 });
    expect(await page().locator('[data-plan-status]').getAttribute('data-plan-status')).toBe('resolved');
    expect((await w.apiGet(`/api/pulse/plans/${planId}`)).final_check.outcome).toBe('resolved');
    await screenshot(page(), 'console-plan-resolved');
  });

  it('ask: the streamed answer and its tool calls appear as they happen, in a new session', async () => {
    await open(page(), '#/ask');
    await page().fill('textarea[name=prompt]', 'What are my most expensive open findings?');
    await page().click('form.ask button[type=submit]');
    await page().waitForURL(/\/ask\/.+/);
    const sessionId = decodeURIComponent(page().url().split('/ask/')[1]!);
    const answer = page().locator('[data-answer]').last();
    await expect.poll(() => answer.getAttribute('data-answer'), { timeout: 60_000 }).toBe('done');
    // What was streamed is what the service kept as the answer, and the tools it called are listed.
    const history = await world!.apiGet(`/api/v1/history?session_id=${encodeURIComponent(sessionId)}`);
    const reply = history.messages.at(-1);
    expect(reply.role).toBe('assistant');
    expect(await answer.locator('.text').textContent()).toBe(reply.content);
    expect(reply.content.length).toBeGreaterThan(40);
    const tools = answer.locator('[data-tools] li');
    expect(await tools.count()).toBeGreaterThan(0);
    expect(await tools.first().getAttribute('class')).toContain('ok');
    expect(await page().locator('nav.sessions li').count()).toBeGreaterThan(0);
    await screenshot(page(), 'console-ask');
  });

  it('ask: a dropped stream resumes after the last event shown (after_seq): the answer has no gap and no duplicate', async () => {
    const sessionId = decodeURIComponent(page().url().split('/ask/')[1]!);
    const reconnects: Array<string | undefined> = [];
    let first = true;
    // The first attach is cut after its third event (as a proxy or a flaky network would); the page
    // reconnects by itself with after_seq=3, which reaches the real service.
    await page().route('**/console/api/stream/attach**', async (route) => {
      if (!first) {
        reconnects.push(new URL(route.request().url()).searchParams.get('after_seq') ?? undefined);
        return route.continue();
      }
      first = false;
      const res = await route.fetch();
      const frames = (await res.text()).split('\n\n').filter((f) => f.startsWith('id: '));
      await route.fulfill({
        status: 200,
        headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-store' },
        body: `${frames.slice(0, 3).join('\n\n')}\n\n`,
      });
    });
    const before = await page().locator('[data-answer]').count();
    await page().fill('textarea[name=prompt]', 'Which resources cost the most?');
    await page().click('form.ask button[type=submit]');
    const answer = page().locator('[data-answer]').nth(before);
    await answer.waitFor();
    await expect.poll(() => answer.getAttribute('data-answer'), { timeout: 30_000 }).toBe('done');
    expect(reconnects).toEqual(['3']);
    await page().unroute('**/console/api/stream/attach**');
    const history = await world!.apiGet(`/api/v1/history?session_id=${encodeURIComponent(sessionId)}`);
    expect(history.messages.at(-1).role).toBe('assistant');
    expect(await answer.locator('.text').textContent()).toBe(history.messages.at(-1).content);
    // Every tool call shown once: the run's own events, read again from the API, list the same calls.
    const replay = await readSse(
      `${world!.base}/api/v1/stream/attach?session_id=${encodeURIComponent(sessionId)}`,
      {
        token: world!.token,
      },
    );
    const called = replay.events.filter((e) => e.event === 'tool.started').map((e) => e.data.tool);
    expect(called.length).toBeGreaterThan(0);
    const shown = await answer
      .locator('[data-tools] li')
      .evaluateAll((lis) => lis.map((l) => l.getAttribute('data-tool')));
    expect(shown).toEqual(called);
  });

  it('incidents: open one, follow its timeline live, investigate, open the war room', async () => {
    const w = world!;
    await open(page(), '#/incidents');
    await page().fill('form[aria-label="Open an incident"] input[name=title]', 'Checkout latency above 2 s');
    await page().selectOption('form[aria-label="Open an incident"] select[name=severity]', 'SEV2');
    await page().click('form[aria-label="Open an incident"] button[type=submit]');
    await page().waitForURL(/\/incidents\/.+/);
    const id = page().url().split('/incidents/')[1]!;
    await page().locator('[data-live]', { hasText: 'live' }).waitFor();
    await page().locator('[data-list=timeline] li[data-kind=created]').waitFor();
    // Written by someone else, through the API: it appears without a reload.
    const note = await call(w.base, 'POST', `/api/v1/incidents/${id}/timeline`, {
      token: w.token,
      body: { body: 'Rolled back the 09:05 deploy of checkout; watching p99.' },
    });
    expect(note.status).toBe(201);
    await page().locator('[data-list=timeline] li[data-kind=note]', { hasText: 'Rolled back' }).waitFor();
    await page().selectOption('[data-incident-status]', 'investigating');
    await page().locator('[data-list=timeline] li[data-kind=status_changed]').waitFor();
    await page().click('[data-action=investigate]');
    await page()
      .locator('[data-list=timeline] li[data-kind=investigation_started]')
      .waitFor({ timeout: 30_000 });
    const timeline = await w.apiGet(`/api/v1/incidents/${id}/timeline`);
    const shown = await page()
      .locator('[data-list=timeline] li')
      .evaluateAll((lis) => lis.map((l) => Number(l.getAttribute('data-event-id'))));
    expect(shown).toEqual(timeline.events.map((e: { id: number }) => e.id).slice(0, shown.length));
    await screenshot(page(), 'console-incident');
    await page().click('[data-action=war-room]');
    await page().waitForURL(/\/ask\/.+/);
    expect((await w.apiGet(`/api/v1/incidents/${id}`)).war_room).not.toBeNull();
  });

  it('graph: search a resource and draw its blast radius by depth', async () => {
    const w = world!;
    await open(page(), '#/graph?q=nat&depth=3');
    const results = await w.apiGet('/api/v1/graph/search?q=nat&limit=20');
    expect(await page().locator('[data-list=results] li').count()).toBe(results.results.length);
    // The NAT gateway with open findings: its blast radius crosses a known risk.
    const nat = results.results
      .filter((r: { type: string }) => r.type === 'aws_vpc_nat_gateway')
      .sort(
        (a: { open_findings: number }, b: { open_findings: number }) => b.open_findings - a.open_findings,
      )[0];
    await page().click(`[data-resource="${nat.id}"]`);
    const blast = await w.apiGet(`/api/v1/graph/blast-radius/${nat.id}?depth=3`);
    await expect
      .poll(() => page().locator('.graph').getAttribute('data-drawn'))
      .toBe(String(blast.total + 1));
    expect(await page().locator('[data-blast-total]').getAttribute('data-blast-total')).toBe(
      String(blast.total),
    );
    expect(await page().locator('[data-table=impacted] tbody tr').count()).toBe(blast.impacted.length);
    await screenshot(page(), 'console-graph');
  });

  it('morning report: generate one and read it', async () => {
    await open(page(), '#/report');
    await page().click('[data-action=generate]');
    await page().locator('[data-headline]').waitFor({ timeout: 60_000 });
    const latest = await world!.apiGet('/api/v1/reports/morning/latest');
    expect(await page().locator('[data-headline]').textContent()).toBe(latest.headline);
    await screenshot(page(), 'console-report');
  });

  it('settings: team, integrations, and the audit log with its verification', async () => {
    const w = world!;
    // An SNS subscription, recorded as the service records a verified SubscriptionConfirmation.
    const topic = 'arn:aws:sns:eu-west-1:111111111111:alarms';
    await recordSnsSubscription(
      w.t.db,
      w.member.tenant.id,
      { type: 'user', id: w.member.user.id, email: w.member.user.email, token_id: null },
      { Type: 'SubscriptionConfirmation', TopicArn: topic, MessageId: 'm-1' } as SnsMessage,
      `${topic}:0b6941f7`,
    );
    await open(page(), '#/settings');
    const sns = page().locator('[data-table=integrations] tbody tr', {
      hasText: 'CloudWatch alarms via SNS',
    });
    expect(await sns.locator('[data-cell=details]').textContent()).toContain(
      `${topic}: subscription confirmed`,
    );
    const team = await w.apiGet('/api/v1/team');
    expect(await page().locator('[data-table=team] tbody tr').count()).toBe(team.members.length);
    await page().click('[data-check=verify-audit]');
    await page().locator('[data-audit-verify][data-valid=true]').waitFor();
    const verified = await w.apiGet('/api/v1/audit/verify');
    expect(await page().locator('[data-audit-verify]').textContent()).toContain(
      `${verified.checked} entries checked`,
    );
    await screenshot(page(), 'console-settings');
  });

  it('labels every control, and the navigation works from the keyboard', async () => {
    const w = world!;
    const finding = (await w.apiGet('/api/v1/pulse/findings')).findings[0];
    for (const hash of [
      '#/overview',
      '#/findings',
      `#/findings/${finding.id}`,
      '#/ask',
      '#/incidents',
      '#/graph?q=db',
      '#/report',
      '#/settings',
    ]) {
      await open(page(), hash);
      const unlabelled = await page().evaluate(() =>
        [
          ...document.querySelectorAll<HTMLInputElement>(
            '#page input, #page select, #page textarea, #page button',
          ),
        ]
          .filter(
            (el) =>
              !(
                el.labels?.length ||
                el.getAttribute('aria-label') ||
                (el.tagName === 'BUTTON' && el.textContent?.trim())
              ),
          )
          .map((el) => el.outerHTML.slice(0, 80)),
      );
      expect(unlabelled, hash).toEqual([]);
    }
    // Tab reaches the console's navigation; Enter on a link opens its page.
    await page().evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    let focused = '';
    for (let i = 0; i < 10 && focused !== 'findings'; i++) {
      await page().keyboard.press('Tab');
      focused = (await page().evaluate(() => document.activeElement?.getAttribute('data-nav'))) ?? '';
    }
    expect(focused).toBe('findings');
    await page().keyboard.press('Enter');
    await page().locator('#page[data-route="/findings"]').waitFor();
  });

  it('raised no console error, no CSP violation, no uncaught error on any page', () => {
    expect(cp.problems).toEqual([]);
  });
});
