import { closeParsePools } from '@opsi/core';
import { consoleAssets } from './console/bundle';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from './app';
import type { ApiDeps } from './deps';

export interface RunningApi {
  server: Server;
  url: string;
  /** Stops accepting connections and waits for open requests, then cuts what is left after `graceMs`. */
  close(graceMs?: number): Promise<void>;
}

/** Starts the HTTP server on HOST:PORT (PORT 0 picks a free port). */
export async function startApi(deps: ApiDeps): Promise<RunningApi> {
  const app = await createApp(deps);
  // The console's browser bundle is made once per process; a service (not a test) makes it now, so the
  // first page load does not wait for it. A failure is logged and tried again by the first request.
  if (deps.config.NODE_ENV !== 'test') {
    consoleAssets(deps.config.NODE_ENV === 'production').catch((e: unknown) =>
      deps.logger.error({ err: e }, 'console bundle failed'),
    );
  }
  const server = createServer(app.callback());
  // Load balancers keep idle connections ~60 s; outlive them so they never reuse a closed socket.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(deps.config.PORT, deps.config.HOST, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = deps.config.HOST === '0.0.0.0' ? '127.0.0.1' : deps.config.HOST;
  return {
    server,
    url: `http://${host}:${port}`,
    close(graceMs = 10_000) {
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => server.closeAllConnections(), graceMs).unref();
        server.close(() => {
          clearTimeout(timer);
          // The plan parser's threads (started by the first plan review) go with the server.
          closeParsePools().then(resolve, resolve);
        });
        server.closeIdleConnections();
      });
    },
  };
}
