/**
 * Plan text generators for the parser's benchmark and its differential test.
 *
 * - `benchPlan`: the plan `bench/plan-review` parses (gp2 → gp3 updates, instance-type updates, AMI
 *   replacements, rules opening 22 to the world, Elastic IP destroys) from live rows, with the same
 *   plan as `terraform show -json`.
 * - `randomPlan`: a seeded plan that uses every construct of the rendering the parser reads (CI noise,
 *   colours, notes, moved/imported/deposed/tainted objects, `-/+` and `+/-`, nested blocks, lists, maps,
 *   heredocs with diff columns, `jsonencode` diffs, sensitive values, drift, outputs, the 0.11 format).
 * - `mutate`: the same text with seeded damage (lines dropped, doubled, re-indented, cut, prefixed),
 *   so that the parser's tolerance of what it does not understand is compared too.
 */

export interface LiveRow {
  arn: string;
  type: string;
  native_id: string;
  name: string | null;
  attributes: Record<string, unknown>;
}

const q = (s: string) => JSON.stringify(s);

/** One resource block of `terraform plan` text per change, and its `terraform show -json` form. */
export function benchPlan(live: LiveRow[], count: number): { text: string; json: unknown } {
  const text: string[] = ['Terraform will perform the following actions:', ''];
  const changes: unknown[] = [];
  let add = 0;
  let change = 0;
  let destroy = 0;
  const push = (
    address: string,
    phrase: string,
    sym: string,
    type: string,
    lines: string[],
    actions: string[],
    before: unknown,
    after: unknown,
  ) => {
    const name = address.split('.')[1]!;
    text.push(`  # ${address} ${phrase}`, `${sym} resource "${type}" "${name}" {`, ...lines, '    }', '');
    changes.push({
      address,
      mode: 'managed',
      type,
      name,
      change: { actions, before, after, after_unknown: {} },
    });
  };
  for (let i = 0; i < count; i++) {
    const r = live[i % live.length]!;
    const k = `r${i}`;
    const a = r.attributes;
    if (r.type === 'aws_ebs_volume') {
      const before = { id: r.native_id, type: a.volume_type, size: a.size };
      push(
        `aws_ebs_volume.${k}`,
        'will be updated in-place',
        '  ~',
        'aws_ebs_volume',
        [
          `        id   = ${q(r.native_id)}`,
          `      ~ type = ${q(String(a.volume_type))} -> "gp3"`,
          '        # (6 unchanged attributes hidden)',
        ],
        ['update'],
        before,
        { ...before, type: 'gp3' },
      );
      change++;
    } else if (r.type === 'aws_ec2_instance' && i % 3 === 0) {
      const before = { id: r.native_id, instance_type: a.instance_type, ami: 'ami-1' };
      push(
        `aws_instance.${k}`,
        'must be replaced',
        '-/+',
        'aws_instance',
        [
          `      ~ id            = ${q(r.native_id)} -> (known after apply)`,
          '      ~ ami           = "ami-1" -> "ami-2" # forces replacement',
          `        instance_type = ${q(String(a.instance_type))}`,
        ],
        ['delete', 'create'],
        before,
        { instance_type: a.instance_type, ami: 'ami-2' },
      );
      add++;
      destroy++;
    } else if (r.type === 'aws_ec2_instance') {
      const before = { id: r.native_id, instance_type: a.instance_type };
      push(
        `aws_instance.${k}`,
        'will be updated in-place',
        '  ~',
        'aws_instance',
        [
          `        id            = ${q(r.native_id)}`,
          `      ~ instance_type = ${q(String(a.instance_type))} -> "m5.xlarge"`,
        ],
        ['update'],
        before,
        { ...before, instance_type: 'm5.xlarge' },
      );
      change++;
    } else if (r.type === 'aws_vpc_security_group') {
      text.push(
        `  # aws_security_group_rule.${k} will be created`,
        `  + resource "aws_security_group_rule" "${k}" {`,
        '      + cidr_blocks       = [',
        '          + "0.0.0.0/0",',
        '        ]',
        '      + from_port         = 22',
        '      + id                = (known after apply)',
        '      + protocol          = "tcp"',
        `      + security_group_id = ${q(r.native_id)}`,
        '      + to_port           = 22',
        '      + type              = "ingress"',
        '    }',
        '',
      );
      changes.push({
        address: `aws_security_group_rule.${k}`,
        mode: 'managed',
        type: 'aws_security_group_rule',
        name: k,
        change: {
          actions: ['create'],
          before: null,
          after: {
            cidr_blocks: ['0.0.0.0/0'],
            from_port: 22,
            protocol: 'tcp',
            security_group_id: r.native_id,
            to_port: 22,
            type: 'ingress',
          },
          after_unknown: { id: true },
        },
      });
      add++;
    } else {
      const before = { id: r.native_id, tags: { Name: r.name ?? r.native_id } };
      const type =
        r.type === 'aws_vpc_eip'
          ? 'aws_eip'
          : r.type === 'aws_vpc_nat_gateway'
            ? 'aws_nat_gateway'
            : 'aws_eip';
      push(
        `${type}.${k}`,
        'will be destroyed',
        '  -',
        type,
        [
          `      - id   = ${q(r.native_id)} -> null`,
          '      - tags = {',
          `          - "Name" = ${q(r.name ?? r.native_id)}`,
          '        } -> null',
        ],
        ['delete'],
        before,
        null,
      );
      destroy++;
    }
  }
  text.push(`Plan: ${add} to add, ${change} to change, ${destroy} to destroy.`, '');
  return {
    text: text.join('\n'),
    json: { format_version: '1.2', terraform_version: '1.11.4', resource_changes: changes },
  };
}

/** A deterministic pseudo-random source (mulberry32). */
export function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  return { next, int, pick, chance: (p: number) => next() < p };
}
export type Rng = ReturnType<typeof rng>;

/** Live-looking rows for `benchPlan` without a database: the four types the bench draws. */
export function syntheticLive(n: number, seed: number): LiveRow[] {
  const r = rng(seed);
  const types = ['aws_ebs_volume', 'aws_ec2_instance', 'aws_vpc_security_group', 'aws_vpc_eip'];
  const rows: LiveRow[] = [];
  for (let i = 0; i < n; i++) {
    const type = r.pick(types);
    const id = `${type.slice(4, 7)}-${(r.next() * 1e16).toString(16).padStart(14, '0')}`;
    rows.push({
      arn: `arn:aws:ec2:us-east-1:123456789012:${type}/${id}`,
      type,
      native_id: id,
      name: r.chance(0.7) ? `prod-${type.slice(4)}-${i}` : null,
      attributes: {
        volume_type: r.pick(['gp2', 'gp3', 'io1']),
        size: r.int(500),
        instance_type: r.pick(['t3.micro', 'm5.large', 'c5.xlarge']),
      },
    });
  }
  return rows;
}

// ------------------------------------------------------------------ randomized plans

const ESC = '\x1b';
const SCALARS = [
  '"a"',
  '"with \\"quotes\\" and \\\\ slash"',
  '""',
  '42',
  '-3.5',
  '1e3',
  'true',
  'false',
  'null',
  '(known after apply)',
  '(sensitive value)',
  '(sensitive)',
  '"0.0.0.0/0"',
  '"arn:aws:iam::123456789012:role/x"',
  '"a, b"',
  '"café ✓"',
  'bare-word',
  '007',
];
const KEYS = [
  'id',
  'name',
  'type',
  'size',
  'tags',
  'cidr_blocks',
  'policy',
  '"Name"',
  '"kubernetes.io/role"',
  'x-y',
];

function scalar(r: Rng): string {
  return r.pick(SCALARS);
}

/** The value part of an attribute line (and the lines that follow it), at `indent`. */
function value(r: Rng, indent: string, depth: number, sym: string, out: string[]): string {
  const arrowScalar = () => (r.chance(0.5) ? ` -> ${scalar(r)}` : '');
  const closeArrow = () => (r.chance(0.25) ? ` -> ${r.pick(['null', '(known after apply)', '"x"'])}` : '');
  const forces = () => (r.chance(0.15) ? ' # forces replacement' : '');
  const kind = depth > 3 ? 0 : r.int(9);
  switch (kind) {
    case 1: {
      // list
      const n = r.int(4);
      const lines: string[] = [];
      for (let k = 0; k < n; k++) {
        const s = r.pick(['+', '-', '~', ' ', sym]);
        const inner: string[] = [];
        const v = r.chance(0.2) ? value(r, indent + '    ', depth + 1, s, inner) : scalar(r) + arrowScalar();
        lines.push(`${indent}    ${s} ${v}${r.chance(0.8) ? ',' : ''}`, ...inner);
        if (r.chance(0.1)) lines.push(`${indent}    # (2 unchanged elements hidden)`);
      }
      out.push(...lines, `${indent}]${closeArrow()}${forces()}`);
      return '[';
    }
    case 2: {
      // map
      const n = r.int(4);
      for (let k = 0; k < n; k++) {
        const s = r.pick(['+', '-', '~', ' ']);
        const inner: string[] = [];
        const v = value(r, indent + '    ', depth + 1, s, inner);
        out.push(`${indent}    ${s} ${r.pick(KEYS)} = ${v}`, ...inner);
      }
      out.push(`${indent}}${closeArrow()}${forces()}`);
      return '{';
    }
    case 3: {
      // heredoc, with a diff column in updates
      const marker = r.pick(['EOT', 'EOF', 'POLICY']);
      const n = 1 + r.int(4);
      for (let k = 0; k < n; k++) {
        const col = r.pick(['  ', '+ ', '- ', '']);
        out.push(
          `${indent}    ${col}${r.pick(['line', '# resource "aws_x" "y" {', '}', '-/+ no', '  x = 1', '', EOT_LIKE(marker)])}`,
        );
      }
      out.push(`${indent}${marker}${closeArrow()}${forces()}`);
      return `<<${r.chance(0.8) ? '-' : ''}${marker}${forces()}`;
    }
    case 4: {
      // jsonencode( … )
      const inner: string[] = [];
      const s = r.pick(['~', '+', '-', ' ']);
      const v = value(r, indent + '    ', depth + 1, s, inner);
      out.push(`${indent}    ${s} ${v}`, ...inner, `${indent})${closeArrow()}`);
      return `${r.pick(['jsonencode', 'yamlencode', 'toset', 'tomap', 'sensitive', 'base64encode'])}(`;
    }
    case 5:
      return r.pick([
        '[]',
        '{}',
        '[] -> (known after apply)',
        '{} -> null',
        '[] -> [',
        'jsonencode({"a":1})',
        'toset(["a","b"])',
        'tolist([])',
      ]);
    case 6:
      return `${scalar(r)} -> ${r.pick(['[', '{', '<<-EOT', 'jsonencode('])}`;
    default:
      return scalar(r) + arrowScalar() + forces();
  }
}
const EOT_LIKE = (m: string) => `  ${m}x`;

function body(r: Rng, indent: string, depth: number, out: string[]) {
  const n = 1 + r.int(6);
  for (let k = 0; k < n; k++) {
    const s = r.pick(['+', '-', '~', ' ', ' ']);
    if (depth < 3 && r.chance(0.15)) {
      const label = r.pick(['', ' "web"', ' "a" "b"']);
      const name = r.pick(['ingress', 'timeouts', 'rule', 'root_block_device']);
      if (r.chance(0.2)) {
        out.push(`${indent}${s} ${name}${label} {}${r.chance(0.3) ? ' # forces replacement' : ''}`);
      } else {
        out.push(`${indent}${s} ${name}${label} {${r.chance(0.2) ? ' # forces replacement' : ''}`);
        body(r, indent + '    ', depth + 1, out);
        out.push(`${indent}  }${r.chance(0.2) ? ' # forces replacement' : ''}`);
      }
      continue;
    }
    if (r.chance(0.08)) {
      out.push(`${indent}  # (${r.int(9)} unchanged attributes hidden)`);
      continue;
    }
    const inner: string[] = [];
    const v = value(r, indent + '  ', depth, s, inner);
    out.push(`${indent}${s} ${r.pick(KEYS).padEnd(r.int(14))} = ${v}`, ...inner);
  }
}

const PHRASES = [
  ['will be created', '  +'],
  ['will be destroyed', '  -'],
  ['will be updated in-place', '  ~'],
  ['must be replaced', '-/+'],
  ['must be replaced', '+/-'],
  ['is tainted, so must be replaced', '-/+'],
  ['will be replaced, as requested', '-/+'],
  ['will be replaced due to changes in replace_triggered_by', '+/-'],
  ['will be read during apply', ' <='],
  ['will be imported', '   '],
  ['will no longer be managed by Terraform', '  .'],
  ['will no longer be managed by Terraform, but will not be destroyed', '  .'],
  ['has moved to aws_x.moved_to', '   '],
  ['has changed', '  ~'],
  ['has been deleted', '  -'],
] as const;
const NOTES = [
  '# (because aws_x.y is not in configuration)',
  '# (because resource does not use count)',
  '# (because index [3] is out of range for count)',
  '# (because key ["a"] is not in for_each map)',
  '# (because module.m is not in configuration)',
  '# (because aws_x.y has no module instance)',
  '# (config refers to values not yet known)',
  '# (depends on a resource or a module with changes pending)',
  '# (moved from aws_x.old)',
  '# (imported from "i-0abc")',
  '# (left over from a partially-failed replacement)',
  '# (destroy = false is set in the configuration)',
];
const ADDRESSES = [
  'aws_instance.web',
  'aws_instance.web[0]',
  'module.net.aws_subnet.private["eu west"]',
  'module.a["k.v"].module.b[2].aws_x.y',
  'data.aws_ami.latest',
  'aws_launch_template.web (deposed object 4a5b6c7d)',
  'terraform_data.x',
];

function colour(r: Rng, line: string): string {
  if (!r.chance(0.3)) return line;
  return line.replace(/^(\s*)([+~-]|<=|-\/\+|\+\/-)(?= )/, (_, sp: string, s: string) =>
    r.chance(0.5) ? `${sp}${ESC}[33m${s}${ESC}[0m${ESC}[0m` : `${ESC}[0m${sp}${ESC}[31m${s}${ESC}[0m`,
  );
}

const NOISE = [
  (l: string) => `2026-01-01T00:00:00.1234567Z ${l}`,
  (l: string) => `[infra/app] terraform: ${l}`,
  (l: string) => `12:00:00.000 STDOUT [infra/app] tofu: ${l}`,
  (l: string) => `${l}\r`,
  (l: string) => `progress\r${l}`,
  (l: string) => `${ESC}[1m${l}${ESC}[0m`,
  (l: string) => `${l}   `,
];

/** A seeded modern plan (or, one time in eight, a 0.11 one) using the whole rendering. */
export function randomPlan(seed: number, resources = 12): string {
  const r = rng(seed);
  if (r.chance(0.125)) return randomLegacyPlan(r, resources);
  const out: string[] = [];
  if (r.chance(0.5)) out.push('Terraform v1.9.8', 'on linux_amd64', '');
  if (r.chance(0.3))
    out.push('╷', '│ Warning: Deprecated attribute', '│', '│ Something.', '╵', '', 'Error: boom', '');
  const emit = (n: number) => {
    for (let k = 0; k < n; k++) {
      const [phrase, sym] = r.pick(PHRASES);
      const address = r.pick(ADDRESSES);
      out.push(`${r.pick(['  ', ' ', '    '])}# ${address} ${phrase}`);
      for (let m = r.int(3); m > 0; m--) out.push(`  ${r.pick(NOTES)}`);
      if (r.chance(0.1)) out.push('');
      const mode = address.startsWith('data.') ? 'data' : 'resource';
      if (r.chance(0.1)) {
        out.push(`${sym} ${mode} "aws_x" "y" {}`);
      } else {
        out.push(`${sym} ${mode} "aws_x" "${r.pick(['y', 'web', 'a-b'])}" {`);
        body(r, '      ', 0, out);
        out.push(`    }${r.chance(0.05) ? ' # forces replacement' : ''}`);
      }
      out.push('');
    }
  };
  if (r.chance(0.4)) {
    out.push('Note: Objects have changed outside of Terraform', '');
    emit(1 + r.int(3));
    out.push('Unless you have made equivalent changes to your configuration, or ignored the', '');
  }
  if (r.chance(0.1)) out.push('This is a refresh-only plan, so Terraform will not take any actions', '');
  out.push(
    r.chance(0.9)
      ? 'Terraform will perform the following actions:'
      : 'Terraform planned the following actions, but then encountered a problem:',
    '',
  );
  emit(resources);
  out.push(
    r.pick([
      'Plan: 1 to add, 2 to change, 3 to destroy.',
      'Plan: 1 to import, 0 to add, 2 to change, 0 to destroy.',
      'Plan: 0 to add, 0 to change, 1 to destroy, 2 to forget.',
      'No changes. Your infrastructure matches the configuration.',
      '',
    ]),
  );
  if (r.chance(0.5)) {
    out.push('', 'Changes to Outputs:', `  + a = ${scalar(r)}`, `  ~ b = "x" -> "y"`, `  - c = 1 -> null`);
  }
  const noisy = r.chance(0.5);
  return out
    .map((l) => (noisy && r.chance(0.3) ? r.pick(NOISE)(colour(r, l)) : colour(r, l)))
    .join(r.chance(0.2) ? '\r\n' : '\n');
}

function randomLegacyPlan(r: Rng, resources: number): string {
  const out = [
    'Refreshing Terraform state in-memory prior to plan...',
    '',
    'Terraform will perform the following actions:',
    '',
  ];
  const attrs = [
    'id',
    'ami',
    'cidr_blocks.#',
    'cidr_blocks.0',
    'tags.%',
    'tags.Name',
    'tags.kubernetes.io/role',
    'ingress.2541437006.from_port',
    'ingress.#',
    'x.1.y',
  ];
  const values = ['"a"', '""', '<computed>', '<sensitive>', '"1"', '"0.0.0.0/0"', '22', 'true'];
  for (let k = 0; k < resources; k++) {
    const sym = r.pick(['+', '-', '~', '-/+', '<=']);
    const tail = r.pick(['', ' (new resource required)', ' (tainted)', ' (deposed)']);
    out.push(
      `${sym === '-/+' ? '' : '  '}${sym} ${r.pick(['aws_x.y', 'module.m.aws_eip.nat.0', 'data.aws_ami.a', 'aws_x.y[2]'])}${tail}`,
    );
    for (let m = r.int(6); m > 0; m--) {
      const b = r.pick(values);
      const v = r.chance(0.5) ? `${b} => ${r.pick(values)}` : b;
      out.push(
        `      ${r.pick(attrs)}:${' '.repeat(1 + r.int(20))}${v}${r.chance(0.2) ? ' (forces new resource)' : ''}`,
      );
    }
    out.push('');
  }
  out.push(r.pick(['Plan: 2 to add, 1 to change, 2 to destroy.', '']));
  return out.join('\n');
}

/** `text` with seeded damage: lines dropped, doubled, swapped, re-indented, cut or given noise. */
export function mutate(text: string, seed: number, edits = 8): string {
  const r = rng(seed);
  const lines = text.split('\n');
  for (let k = 0; k < edits && lines.length; k++) {
    const i = r.int(lines.length);
    const line = lines[i]!;
    switch (r.int(9)) {
      case 0:
        lines.splice(i, 1);
        break;
      case 1:
        lines.splice(i, 0, line);
        break;
      case 2:
        lines[i] = line.slice(0, r.int(line.length + 1));
        break;
      case 3:
        lines[i] = ' '.repeat(r.int(8)) + line.trimStart();
        break;
      case 4:
        lines[i] = r.pick(NOISE)(line);
        break;
      case 5: {
        const j = r.int(lines.length);
        lines[i] = lines[j]!;
        lines[j] = line;
        break;
      }
      case 6:
        lines.splice(
          i,
          0,
          r.pick([
            '}',
            ']',
            ')',
            '',
            '  EOT',
            '{',
            '[',
            '# (1 unchanged)',
            '      + x = [',
            '    ~ y = <<-EOT',
          ]),
        );
        break;
      case 7: {
        const p = r.int(line.length + 1);
        lines[i] =
          line.slice(0, p) +
          r.pick(['"', '\\', ' ', '=', ' -> ', '#', '{', '(', ',', '\t', '\x1b[0m']) +
          line.slice(p);
        break;
      }
      default:
        lines[i] = line + r.pick([' # forces replacement', ' -> null', ',', ' {', ' }', '  ']);
    }
  }
  return lines.join('\n');
}
