import { timingSafeEqual } from 'node:crypto';
import type Koa from 'koa';
import { QUEUE_NAMES } from '@opsi/jobs';
import type { ApiDeps } from '../deps';

export const DASHBOARD_PATH = '/admin/queues';

function sameSecret(a: string, b: string) {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Mounts Bull Board (the operators' queue dashboard) at /admin/queues behind HTTP Basic authentication
 * with OPERATOR_USER / OPERATOR_PASSWORD. Off unless BULL_BOARD_ENABLED; loaded only then.
 */
export async function mountQueueDashboard(app: Koa, deps: ApiDeps): Promise<void> {
  const { OPERATOR_USER: user, OPERATOR_PASSWORD: password } = deps.config;
  if (!deps.config.BULL_BOARD_ENABLED || !user || !password) return;
  const [{ createBullBoard }, { BullMQAdapter }, { KoaAdapter }] = await Promise.all([
    import('@bull-board/api'),
    import('@bull-board/api/bullMQAdapter'),
    import('@bull-board/koa'),
  ]);
  const adapter = new KoaAdapter();
  adapter.setBasePath(DASHBOARD_PATH);
  createBullBoard({
    queues: QUEUE_NAMES.map((q) => new BullMQAdapter(deps.runs.producer.queue(q))),
    serverAdapter: adapter,
  });
  const board = adapter.registerPlugin();
  app.use(async (ctx, next) => {
    if (ctx.path !== DASHBOARD_PATH && !ctx.path.startsWith(`${DASHBOARD_PATH}/`)) return next();
    ctx.state.routePath = DASHBOARD_PATH;
    const [scheme, encoded] = ctx.get('authorization').split(' ');
    const [givenUser, ...rest] = Buffer.from(encoded ?? '', 'base64')
      .toString()
      .split(':');
    if (scheme !== 'Basic' || !sameSecret(givenUser ?? '', user) || !sameSecret(rest.join(':'), password)) {
      ctx.status = 401;
      ctx.set('WWW-Authenticate', 'Basic realm="opsi operators", charset="UTF-8"');
      ctx.body = { detail: 'The queue dashboard needs the operator credential.' };
      return;
    }
    // Bull Board renders its own page with inline script: relax our page policy for it alone.
    ctx.set(
      'Content-Security-Policy',
      "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:",
    );
    return board(ctx, next);
  });
}
