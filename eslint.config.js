import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** The domains of @opsi/core whose SQL is all in their repository (the rule below keeps it there). */
const SQL_IN_REPOSITORY = [
  'agent',
  'agent-sessions',
  'audit',
  'graph',
  'identity',
  'incidents',
  'integrations',
  'inventory',
  'knowledge',
  'plans',
  'plan-review',
  'pulse',
  'reports',
  'triage',
];

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '.data/**',
      '.turbo/**',
      'coverage/**',
      '**/dist/**',
      'docs/openapi.json',
      'packages/sdk/src/openapi.gen.ts',
      'packages/db/src/schema.gen.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'no-console': ['error', { allow: ['error', 'warn'] }],
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportDefaultDeclaration', message: 'Named exports only.' },
      ],
    },
  },
  {
    // In @opsi/core a domain's SQL is written in its repository only (docs/architecture.md, "Core by
    // domain"): no query builder call and no `sql` template in its rules. Tests set up and inspect state
    // with their own SQL.
    files: [`packages/core/src/{${SQL_IN_REPOSITORY.join(',')}}/**/*.ts`],
    ignores: ['**/repository.ts', '**/repository/**', '**/*.test.ts', '**/test/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportDefaultDeclaration', message: 'Named exports only.' },
        {
          selector:
            'CallExpression[callee.property.name=/^(selectFrom|insertInto|updateTable|deleteFrom|mergeInto|replaceInto)$/]',
          message: "A domain's SQL goes in its repository.ts.",
        },
        {
          selector: "TaggedTemplateExpression[tag.name='sql']",
          message: "A domain's SQL goes in its repository.ts.",
        },
        {
          selector: "MemberExpression[object.name='sql']",
          message: "A domain's SQL goes in its repository.ts.",
        },
      ],
    },
  },
  {
    // Imports flow one way: apps → packages. Packages never import apps, and no deep imports.
    files: ['packages/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '@opsi/api',
                '@opsi/worker',
                '@opsi/scheduler',
                '@opsi/admin',
                '@opsi/standalone',
                '@opsi/cli',
              ],
              message: 'Packages never import apps.',
            },
            {
              group: ['@opsi/*/src/*', '../../apps/*', '../../../apps/*'],
              message: 'No deep imports: use the package entry.',
            },
          ],
        },
      ],
    },
  },
  {
    // Apps never import each other; the standalone launcher is the one composition root for npm start.
    files: ['apps/**/*.ts'],
    ignores: ['apps/standalone/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@opsi/api', '@opsi/worker', '@opsi/scheduler', '@opsi/admin', '@opsi/standalone'],
              message: 'Apps never import each other.',
            },
            { group: ['@opsi/*/src/*'], message: 'No deep imports: use the package entry.' },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.config.ts', '**/*.config.js', 'vitest.*.ts', 'test/support/**/*.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    // Operator-facing command-line programs print to the console by design.
    files: [
      'apps/admin/**/*.ts',
      'apps/*/src/*.cli.ts',
      'packages/*/src/*.cli.ts',
      'bench/**/*.ts',
      'test/**/*.ts',
    ],
    rules: { 'no-console': 'off' },
  },
  {
    // Tests read loosely typed JSON bodies; production code may not.
    files: ['test/**/*.ts', '**/*.test.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  prettier,
);
