import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { GetObjectCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { TerraformStateError } from './schema';

/** Where a state is read from at every scan: a file the scanning process can read, or an S3 backend. */
export type TerraformStateSource =
  | { kind: 'file'; path: string }
  | {
      kind: 's3';
      bucket: string;
      key: string;
      region?: string | null | undefined;
      /** Path-style requests (`endpoint/bucket/key`), as the S3 backend's `use_path_style`: MinIO and other stores on a hostname need it. */
      pathStyle?: boolean | undefined;
    };

/** What one read of a source brought back. */
export interface StateRead {
  text: string;
  /** S3's ETag and Last-Modified, a file's modification time. */
  etag: string | null;
  lastModified: Date | null;
}

/** S3's default region when none is given; S3 redirects a bucket's requests to its own region. */
export const DEFAULT_S3_REGION = 'us-east-1';

/** `s3://bucket/path/to/terraform.tfstate` → bucket and key, as the S3 backend's `bucket` and `key`. */
export function parseS3Url(url: string): { bucket: string; key: string } {
  const m = /^s3:\/\/([^/]+)\/(.+)$/.exec(url.trim());
  if (!m) throw new TerraformStateError(`${url} is not an S3 address: give s3://BUCKET/KEY`);
  const bucket = m[1]!;
  // S3's bucket naming rules: 3 to 63 of lowercase letters, digits, dots and hyphens.
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket))
    throw new TerraformStateError(`${bucket} is not a valid S3 bucket name`);
  return { bucket, key: m[2]! };
}

/** The source's name as the connection views show it: `s3://bucket/key` or the file's absolute path. */
export function sourceName(source: TerraformStateSource): string {
  return source.kind === 's3' ? `s3://${source.bucket}/${source.key}` : resolve(source.path);
}

/** Builds the S3 client: the SDK's standard credential chain, and `AWS_ENDPOINT_URL_S3` when set. */
export type S3ClientFactory = (config: S3ClientConfig) => S3Client;
const defaultS3 = (config: S3ClientConfig) => new S3Client(config);

/** A read that failed says which state and why, in words an operator can act on. */
function readError(source: TerraformStateSource, err: unknown): TerraformStateError {
  const e = err as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  if (source.kind === 'file')
    return new TerraformStateError(`Cannot read the Terraform state file ${source.path}: ${e.message}`);
  const where = sourceName(source);
  const status = e.$metadata?.httpStatusCode;
  const hint =
    e.name === 'NoSuchKey'
      ? 'no such key'
      : e.name === 'NoSuchBucket'
        ? 'no such bucket'
        : status === 403 || e.name === 'AccessDenied'
          ? 'access denied (the credentials need s3:GetObject on it)'
          : `${e.name ?? 'error'}${status ? ` (HTTP ${status})` : ''}: ${e.message}`;
  return new TerraformStateError(`Cannot read the Terraform state ${where}: ${hint}`);
}

/** Reads a state's text now (GetObject for S3: read-only, nothing else is called). */
export async function readStateSource(
  source: TerraformStateSource,
  options: { signal?: AbortSignal | undefined; s3?: S3ClientFactory | undefined } = {},
): Promise<StateRead> {
  if (source.kind === 'file') {
    try {
      const text = await readFile(source.path, { encoding: 'utf8', signal: options.signal });
      return { text, etag: null, lastModified: null };
    } catch (err) {
      if (options.signal?.aborted) throw err;
      throw readError(source, err);
    }
  }
  const client = (options.s3 ?? defaultS3)({
    region: source.region ?? DEFAULT_S3_REGION,
    followRegionRedirects: true,
    maxAttempts: 3,
    ...(source.pathStyle ? { forcePathStyle: true } : {}),
  });
  try {
    const out = await client.send(new GetObjectCommand({ Bucket: source.bucket, Key: source.key }), {
      abortSignal: options.signal,
    });
    const text = out.Body ? await out.Body.transformToString('utf-8') : '';
    return { text, etag: out.ETag ?? null, lastModified: out.LastModified ?? null };
  } catch (err) {
    if (options.signal?.aborted) throw err;
    throw readError(source, err);
  } finally {
    client.destroy();
  }
}
