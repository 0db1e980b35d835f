import type { IncomingMessage } from 'node:http';

/** How much of a refused request body is read and thrown away so that the answer reaches the client. */
export const DRAIN_MAX_BYTES = 64 * 1024 * 1024;
export const DRAIN_MAX_MS = 15_000;

/**
 * Reads and discards what is left of a request body the server refuses (413, or a 400 found part-way),
 * up to a bound in bytes and in time, before the answer is sent.
 *
 * Answering while the client is still sending and then closing the connection (`Connection: close`)
 * leaves unread bytes in the server's receive buffer: the kernel then resets the connection (RST) and
 * the client loses the answer it had not yet read (`write EPIPE`, `ECONNRESET`, `fetch failed`; see
 * nodejs/node#12339, #54366, honojs/node-server#327). Consuming the upload first is the server-side
 * remedy those threads name. A client that keeps sending past the bound is answered anyway and the
 * connection closed: it may then see the reset, which an abusive upload deserves.
 */
export function drainRequest(
  req: IncomingMessage,
  maxBytes = DRAIN_MAX_BYTES,
  maxMs = DRAIN_MAX_MS,
): Promise<void> {
  if (req.complete || req.destroyed || req.readableEnded) return Promise.resolve();
  return new Promise((resolve) => {
    let seen = 0;
    const done = () => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', done);
      req.off('close', done);
      req.off('error', done);
      req.pause();
      resolve();
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > maxBytes) done();
    };
    const timer = setTimeout(done, maxMs);
    timer.unref();
    // A parser that gave up (raw-body on its limit) unpiped and paused its own stream, which left the
    // request paused behind it: detach everything and let the bytes flow to nowhere.
    req.unpipe();
    req.on('data', onData);
    req.once('end', done);
    req.once('close', done);
    req.once('error', done);
    req.resume();
  });
}
