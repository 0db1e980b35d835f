import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// s3rver: an S3-compatible server from npm (path-style REST, ETag and Last-Modified, S3's XML errors
// such as NoSuchKey, SigV4-signed requests accepted), so the SDK's own client is what the tests drive.
// @ts-expect-error s3rver ships no type declarations
import S3rver from 's3rver';

/** A local S3-compatible store on loopback, for the AWS SDK through `AWS_ENDPOINT_URL_S3`. */
export interface S3Peer {
  /** `http://127.0.0.1:<port>`: the value for `AWS_ENDPOINT_URL_S3`. */
  endpoint: string;
  /** Static credentials the SDK's standard chain picks up from the environment. */
  env: Record<string, string>;
  close(): Promise<void>;
}

/** Starts the peer with the named buckets; every object lives in a temporary directory. */
export async function startS3Peer(buckets: string[]): Promise<S3Peer> {
  const directory = await mkdtemp(join(tmpdir(), 'opsi-s3-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: buckets.map((name) => ({ name })),
  }) as { run(): Promise<{ port: number }>; close(): Promise<void> };
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    env: {
      AWS_ENDPOINT_URL_S3: endpoint,
      // s3rver's default key pair; the SDK signs with it as with any.
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
    },
    async close() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
