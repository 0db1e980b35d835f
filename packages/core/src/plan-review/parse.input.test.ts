import { describe, expect, it } from 'vitest';
import { parsePlan } from './parse';

// Plan files as CI produces them (decisions.md, Wave 3).

const TEXT = `Terraform will perform the following actions:

  # aws_s3_bucket.b will be created
  + resource "aws_s3_bucket" "b" {
      + acl    = "public-read"
      + bucket = "b"
    }

Plan: 1 to add, 0 to change, 0 to destroy.
`;
const JSON_PLAN = JSON.stringify({
  format_version: '1.2',
  terraform_version: '1.9.5',
  resource_changes: [
    {
      address: 'aws_s3_bucket.b',
      mode: 'managed',
      type: 'aws_s3_bucket',
      name: 'b',
      change: { actions: ['create'], before: null, after: { bucket: 'b' }, after_unknown: { id: true } },
    },
  ],
});

/** UTF-16 LE with a BOM, as PowerShell's `>` writes it, read back a byte at a time (what the CLI sent). */
const utf16AsBytes = (s: string) => Buffer.from('\uFEFF' + s, 'utf16le').toString('utf8');
const utf16beAsLatin1 = (s: string) =>
  Buffer.from('\uFEFF' + s, 'utf16le')
    .swap16()
    .toString('latin1');

const addresses = (input: string) => parsePlan(input).changes.map((c) => `${c.action} ${c.address}`);

describe('encodings', () => {
  it('UTF-16 LE and BE with a BOM, read as bytes: the NULs and the BOM go', () => {
    expect(addresses(utf16AsBytes(TEXT))).toEqual(['create aws_s3_bucket.b']);
    expect(addresses(utf16beAsLatin1(TEXT))).toEqual(['create aws_s3_bucket.b']);
    expect(addresses(utf16AsBytes(JSON_PLAN))).toEqual(['create aws_s3_bucket.b']);
  });

  it('a UTF-8 BOM, CRLF and ANSI colours', () => {
    const coloured = TEXT.replace('# aws_s3_bucket.b', '\x1b[1m# aws_s3_bucket.b\x1b[0m').replace(
      /\n/g,
      '\r\n',
    );
    expect(addresses('\uFEFF' + coloured)).toEqual(['create aws_s3_bucket.b']);
    expect(addresses('\uFEFF' + JSON_PLAN.replace(/,/g, ',\r\n'))).toEqual(['create aws_s3_bucket.b']);
  });
});

describe("hashicorp/setup-terraform's wrapper (v1, v2: not silent, core.debug, ::set-output)", () => {
  const escape = (s: string) => s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
  const wrapped = (out: string) =>
    [
      '[command]/home/runner/work/_temp/3d21-4f72/terraform-bin show -json plan.tfplan',
      out,
      '::debug::Terraform exited with code 0.',
      `::debug::stdout: ${escape(out)}`,
      '::debug::stderr: ',
      '::debug::exitcode: 0',
      `::set-output name=stdout::${escape(out)}`,
      '::set-output name=stderr::',
      '::set-output name=exitcode::0',
      '',
    ].join('\n');

  it('the JSON of `terraform show -json` between the framing lines', () => {
    expect(addresses(wrapped(JSON_PLAN))).toEqual(['create aws_s3_bucket.b']);
  });

  it('a text plan between the framing lines, its line numbers those of the posted text', () => {
    const parsed = parsePlan(wrapped(TEXT));
    expect(parsed.changes.map((c) => c.address)).toEqual(['aws_s3_bucket.b']);
    expect(parsed.changes[0]!.source).toEqual({ kind: 'text', lines: { start: 4, end: 8 } });
  });

  it('only the logged, escaped output (a copied debug log)', () => {
    const log = wrapped(TEXT)
      .split('\n')
      .filter((l) => l.startsWith('::'))
      .join('\n');
    expect(addresses(log)).toEqual(['create aws_s3_bucket.b']);
  });

  it('with GitHub timestamps on every line', () => {
    const stamped = wrapped(JSON_PLAN)
      .split('\n')
      .map((l) => `2024-05-01T12:00:00.1234567Z ${l}`)
      .join('\n');
    expect(addresses(stamped)).toEqual(['create aws_s3_bucket.b']);
  });
});

describe('shell and Atlantis framing, trimmed JSON', () => {
  it('a shell prompt, then stderr lines after the JSON', () => {
    expect(
      addresses(
        `$ terraform show -json tfplan\n${JSON_PLAN}\nReleasing state lock. This may take a few moments...\n`,
      ),
    ).toEqual(['create aws_s3_bucket.b']);
  });

  it('an Atlantis comment: markdown, a diff fence, symbols moved to column 0', () => {
    const comment = `Ran Plan for dir: \`production\` workspace: \`default\`\n\n<details><summary>Show Output</summary>\n\n\`\`\`diff\n${TEXT.replace('  + resource', '+ resource')}\`\`\`\n</details>\n`;
    expect(addresses(comment)).toEqual(['create aws_s3_bucket.b']);
  });

  it('a JSON plan trimmed to resource_changes is reviewed; other JSON is still a 400', () => {
    const trimmed = JSON.stringify({ resource_changes: JSON.parse(JSON_PLAN).resource_changes });
    expect(addresses(trimmed)).toEqual(['create aws_s3_bucket.b']);
    expect(() => parsePlan('{"values":{"root_module":{}}}')).toThrow(/not a Terraform plan/);
    expect(() => parsePlan('{"resource_changes":[{"address":"x"}]}')).toThrow(/not a Terraform plan/);
  });
});
