import { describe, expect } from 'vitest';
import { startTestApi } from '@opsi/test-support';
import { apiTest } from '@opsi/test-support/api-fixture';

// `api` has the dashboard off (the default); `on` has it on, behind the operator's credential.
const it = apiTest.extend('on', { scope: 'file' }, async ({ t }, { onCleanup }) => {
  const on = await startTestApi(t, {
    BULL_BOARD_ENABLED: true,
    OPERATOR_USER: 'ops',
    OPERATOR_PASSWORD: 'correct-horse-battery',
  });
  onCleanup(() => on.close());
  return on;
});
const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('queue dashboard (Bull Board)', () => {
  it('is off by default', async ({ api: off }) => {
    const res = await fetch(`${off.url}/admin/queues`, {
      headers: { authorization: basic('ops', 'correct-horse-battery') },
    });
    expect(res.status).toBe(404);
  });

  it('needs the operator credential', async ({ on }) => {
    for (const headers of [
      {},
      { authorization: basic('ops', 'wrong-password-here') },
      { authorization: basic('root', 'correct-horse-battery') },
      { authorization: 'Bearer opsi_x' },
    ] as Array<Record<string, string>>) {
      const res = await fetch(`${on.url}/admin/queues`, { headers });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Basic/);
      expect(await res.json()).toEqual({ detail: expect.any(String) });
    }
  });

  it('shows every queue to the operator', async ({ on }) => {
    const page = await fetch(`${on.url}/admin/queues`, {
      headers: { authorization: basic('ops', 'correct-horse-battery') },
    });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    const api = await fetch(`${on.url}/admin/queues/api/queues`, {
      headers: { authorization: basic('ops', 'correct-horse-battery') },
    });
    expect(api.status).toBe(200);
    const body = (await api.json()) as { queues: Array<{ name: string }> };
    expect(body.queues.map((q) => q.name).sort()).toEqual(['agent', 'plans', 'pulse', 'reports', 'triage']);
  });
});
