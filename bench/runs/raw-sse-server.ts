// Baseline (d): an SSE endpoint with nothing behind it, holding idle connections the way ours does
// (event-stream head, an opening comment, a keepalive timer per connection). BENCH_SSE_KIND picks bare
// node:http or bare Koa. Started as its own process by main.ts.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';

const KEEPALIVE_MS = 15_000;

function holdOpen(req: IncomingMessage, res: ServerResponse) {
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
  });
  res.socket?.setNoDelay(true);
  res.write(': stream open\n\n');
  const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
  return new Promise<void>((resolve) =>
    res.once('close', () => {
      clearInterval(keepalive);
      resolve();
    }),
  );
}

let handler: (req: IncomingMessage, res: ServerResponse) => void;
if (process.env.BENCH_SSE_KIND === 'koa') {
  const app = new Koa();
  app.use(async (ctx) => {
    ctx.respond = false;
    await holdOpen(ctx.req, ctx.res);
  });
  handler = app.callback();
} else {
  handler = (req, res) => void holdOpen(req, res);
}

const server = createServer(handler);
server.listen(0, '127.0.0.1', () => {
  process.send?.({ type: 'ready', port: (server.address() as AddressInfo).port });
});
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
