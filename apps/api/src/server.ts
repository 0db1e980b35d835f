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
          resolve();
        });
        server.closeIdleConnections();
      });
    },
  };
}
