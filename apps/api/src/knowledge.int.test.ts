import { describe, expect } from 'vitest';
import { call } from '@opsi/test-support';
import { apiTest } from '@opsi/test-support/api-fixture';
import { recordLearning } from '@opsi/core';

const it = apiTest
  .override({ workerConfig: { AGENT_ENGINE: 'builtin', WORKER_QUEUES: ['agent'] } })
  .extend(
    'list',
    async ({ url, aRead }) =>
      (query = '', token = aRead) =>
        call(url, 'GET', `/api/v1/learnings${query}`, { token }),
  )
  .extend(
    'teach',
    async ({ url, aWrite }) =>
      (body: unknown, token = aWrite) =>
        call(url, 'POST', '/api/v1/learnings', { token, body }),
  )
  .extend(
    'count',
    async ({ t }) =>
      async (tenantId: string) =>
        Number(
          (
            await t.db
              .selectFrom('learnings')
              .select((eb) => eb.fn.countAll().as('n'))
              .where('tenant_id', '=', tenantId)
              .executeTakeFirstOrThrow()
          ).n,
        ),
  );

describe('learnings', () => {
  it('starts empty', async ({ list }) => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ learnings: [] });
  });

  it('POST teaches a fact: 201 with the record, trimmed, audit-logged; GET lists it, newest first', async ({
    list,
    teach,
    url,
    a,
    aRead,
  }) => {
    const first = await teach({
      fact: '  The payments DB is sized for month-end batch runs.  ',
      service: 'payments',
    });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      fact: 'The payments DB is sized for month-end batch runs.',
      service: 'payments',
      status: 'active',
      source: 'user',
      created_by: `user:${a.user.email}`,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      last_used_at: null,
      used_count: 0,
    });
    const second = await teach({ fact: 'Deploys freeze on Fridays.' });
    expect(second.status).toBe(201);
    expect(second.body.service).toBeNull();

    const res = await list();
    expect(res.body.learnings.map((l: { id: string }) => l.id)).toEqual([second.body.id, first.body.id]);
    expect(res.body.learnings[1]).toEqual(first.body);

    const audit = await call(url, 'GET', '/api/v1/audit?limit=2', { token: aRead });
    expect(audit.body.entries.map((e: { action: string }) => e.action)).toEqual([
      'learning.created',
      'learning.created',
    ]);
    expect(audit.body.entries[0]).toMatchObject({ target_type: 'learning', target_id: second.body.id });
  });

  it('filters by service (case-insensitive) and status', async ({ list }) => {
    const payments = await list('?service=PAYMENTS');
    expect(payments.status).toBe(200);
    expect(payments.body.learnings.map((l: { service: string }) => l.service)).toEqual(['payments']);
    expect((await list('?status=archived')).body).toEqual({ learnings: [] });
    expect((await list('?status=active')).body.learnings).toHaveLength(2);
  });

  it('bad input is 400 {detail} and changes nothing', async ({ list, teach, count, url, a, aWrite }) => {
    const before = await count(a.tenant.id);
    for (const body of [
      {},
      { fact: '' },
      { fact: '   ' },
      { fact: 'x'.repeat(2001) },
      { fact: 42 },
      { fact: 'ok', service: '' },
      { fact: 'ok', service: 'x'.repeat(129) },
    ]) {
      const res = await teach(body);
      expect(res.status, JSON.stringify(body).slice(0, 40)).toBe(400);
      expect(res.body).toEqual({ detail: expect.any(String) });
    }
    expect((await list('?status=deleted')).status).toBe(400);
    const raw = await call(url, 'POST', '/api/v1/learnings', {
      token: aWrite,
      headers: { 'content-type': 'text/plain' },
      rawBody: 'fact=x',
    });
    expect(raw.status).toBe(415);
    expect(await count(a.tenant.id)).toBe(before);
  });

  it('needs a token, and a read_write one to teach', async ({ teach, url, aRead }) => {
    expect((await call(url, 'GET', '/api/v1/learnings')).status).toBe(401);
    expect((await call(url, 'POST', '/api/v1/learnings', { body: { fact: 'x' } })).status).toBe(401);
    const res = await teach({ fact: 'A read token cannot teach.' }, aRead);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ detail: expect.any(String) });
  });

  it('each tenant sees only its own learnings, and the agent reads only its own', async ({
    list,
    teach,
    count,
    url,
    a,
    aWrite,
    bWrite,
  }) => {
    const before = await count(a.tenant.id);
    const own = await teach(
      { fact: 'Tenant B keeps its ledger in zebra-store.', service: 'payments' },
      bWrite,
    );
    expect(own.status).toBe(201);
    expect((await list('', bWrite)).body.learnings.map((l: { id: string }) => l.id)).toEqual([own.body.id]);
    const ofA = (await list()).body.learnings;
    expect(ofA.map((l: { fact: string }) => l.fact)).not.toContain(own.body.fact);
    expect(await count(a.tenant.id)).toBe(before);

    // The built-in engine answers from the list_learnings tool, through a real run.
    const ask = await call(url, 'POST', '/api/v1/ask', {
      token: aWrite,
      body: { prompt: 'What have we learned about the payments service?' },
    });
    expect(ask.status).toBe(200);
    expect(ask.body.reply).toContain('The payments DB is sized for month-end batch runs.');
    expect(ask.body.reply).not.toContain('zebra-store');
    expect(ask.body.reply).not.toContain(own.body.id);

    // The answer cites the learning it used: its use is counted; B's is untouched.
    const cited = (await list('?service=payments')).body.learnings[0];
    expect(ask.body.reply).toContain(cited.id);
    expect(cited).toMatchObject({ used_count: 1, last_used_at: expect.any(String) });
    expect((await list('', bWrite)).body.learnings[0]).toMatchObject({ used_count: 0, last_used_at: null });
  });

  it('PATCH archives a learning (and reactivates it): the record, audit-logged; the agent no longer gets it', async ({
    list,
    teach,
    url,
    aRead,
    aWrite,
    bWrite,
  }) => {
    const l = (await teach({ fact: 'The staging NAT is shared with the data team.', service: 'staging' }))
      .body;
    const patch = (id: string, body: unknown, token = aWrite) =>
      call(url, 'PATCH', `/api/v1/learnings/${id}`, { token, body });
    const res = await patch(l.id, { status: 'archived' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...l, status: 'archived' });
    expect((await list()).body.learnings.map((x: { id: string }) => x.id)).not.toContain(l.id);
    expect((await list('?status=archived')).body.learnings.map((x: { id: string }) => x.id)).toEqual([l.id]);
    const audit = await call(url, 'GET', '/api/v1/audit?limit=1', { token: aRead });
    expect(audit.body.entries[0]).toMatchObject({ action: 'learning.archived', target_id: l.id });
    const ask = await call(url, 'POST', '/api/v1/ask', {
      token: aWrite,
      body: { prompt: 'What have we learned about the staging service?' },
    });
    expect(ask.body.reply).not.toContain(l.id);

    expect((await patch(l.id, { status: 'active' })).body.status).toBe('active');
    // Bad input, roles, isolation.
    for (const body of [{}, { status: 'deleted' }, { status: 'archived', fact: 'x' }]) {
      const bad = await patch(l.id, body);
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.body).toEqual({ detail: expect.any(String) });
    }
    expect((await patch(l.id, { status: 'archived' }, aRead)).status).toBe(403);
    expect((await patch(l.id, { status: 'archived' }, bWrite)).status).toBe(404);
    expect((await patch('00000000-0000-0000-0000-000000000000', { status: 'archived' })).status).toBe(404);
    expect((await patch('not-a-uuid', { status: 'archived' })).status).toBe(404);
    expect((await list()).body.learnings.find((x: { id: string }) => x.id === l.id).status).toBe('active');
  });

  it('learnings written by the service carry their source and author', async ({ list, a, t }) => {
    const byPlan = await recordLearning(t.db, a.tenant.id, {
      fact: 'Releasing idle EIPs closed finops.eip_unassociated.',
      source: 'plan',
      createdBy: 'plan:7f6c',
    });
    const res = (await list()).body.learnings.find((x: { id: string }) => x.id === byPlan.id);
    expect(res).toMatchObject({ source: 'plan', created_by: 'plan:7f6c', status: 'active', used_count: 0 });
  });
});
