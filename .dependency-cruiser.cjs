/**
 * The import rules CI enforces (`npm run lint` runs `depcruise`): no import cycle anywhere in the
 * workspace's own code, no package reaching into another's files (only through its package name and
 * the entry points its package.json exports), and nothing unresolvable.
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
