/**
 * The import rules CI enforces (`npm run lint` runs `depcruise`): no import cycle anywhere in the
 * workspace's own code, no package reaching into another's files (only through its package name and
 * the entry points its package.json exports), nothing unresolvable, and in @opsi/core one domain
 * (`packages/core/src/<domain>/`) imports another only through that domain's `index.ts`, while the
 * kernel (the files directly under `packages/core/src/`) imports no domain. With no-circular, the
 * index-only rule also keeps the graph of domains acyclic: a cycle between two domains' files would
 * pass through both indexes, each of which re-exports its whole domain.
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'An import cycle: modules that need each other belong in one module, or talk over the domain bus.',
      from: { path: '^(apps|packages)/' },
      to: { circular: true },
    },
    {
      name: 'no-reaching-into-packages',
      severity: 'error',
      comment:
        'Import another workspace package by its name (@opsi/...), never by a relative path into its files.',
      from: { path: '^(apps|packages)/([^/]+)/' },
      // only relative paths count: an import by package name (@opsi/...) is an aliased workspace import
      to: {
        path: '^packages/([^/]+)/',
        pathNot: '^packages/$2/',
        dependencyTypesNot: ['aliased-workspace', 'aliased', 'npm', 'npm-dev', 'npm-no-pkg'],
      },
    },
    {
      name: 'core-domain-through-index',
      severity: 'error',
      comment:
        "A domain of @opsi/core reached past its index: import '../<domain>' (its index.ts, the domain's only public surface).",
      from: { path: '^packages/core/src/([^/]+)/' },
      to: {
        path: '^packages/core/src/[^/]+/',
        pathNot: ['^packages/core/src/$1/', '^packages/core/src/[^/]+/index\\.ts$'],
      },
    },
    {
      name: 'core-kernel-imports-no-domain',
      severity: 'error',
      comment:
        'The kernel (errors, context, events, group commit, tool definitions) is what every domain shares, so it imports none; only the composition root (index.ts, wiring.ts) does.',
      from: {
        path: '^packages/core/src/[^/]+\\.ts$',
        pathNot: ['^packages/core/src/(index|wiring)\\.ts$', '\\.test\\.ts$'],
      },
      to: { path: '^packages/core/src/[^/]+/' },
    },
    {
      name: 'core-root-through-index',
      severity: 'error',
      comment: "The composition root takes each domain through its index: import './<domain>'.",
      from: { path: '^packages/core/src/(index|wiring)\\.ts$' },
      to: { path: '^packages/core/src/[^/]+/', pathNot: '^packages/core/src/[^/]+/index\\.ts$' },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      from: { path: '^(apps|packages)/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules)/' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
    },
    combinedDependencies: true,
  },
};
