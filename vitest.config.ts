import { defineConfig } from 'vitest/config';

const shared = { globalSetup: ['./vitest.global-setup.ts'], testTimeout: 30_000, hookTimeout: 60_000 };

export default defineConfig({
  test: {
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects: [
      {
        test: {
          name: 'unit',
          // Projects run as groups in this order; vitest requires distinct groups when maxWorkers differ.
          sequence: { groupOrder: 0 },
          include: ['packages/*/src/**/*.test.ts', 'apps/*/src/**/*.test.ts'],
          exclude: ['**/*.int.test.ts', '**/node_modules/**'],
        },
      },
      {
        test: {
          ...shared,
          name: 'integration',
          // The API files' setup (a database clone, an API, tenants: @opsi/test-support/api-fixture) is
          // file-scoped fixtures made when the first test asks for them, inside that test's time: give a
          // test the hook's 60 s plus its own 30 s, so a loaded CI machine is not a failure.
          testTimeout: 90_000,
          sequence: { groupOrder: 1 },
          include: [
            'packages/*/src/**/*.int.test.ts',
            'apps/*/src/**/*.int.test.ts',
            'test/agent-eval/**/*.int.test.ts',
          ],
        },
      },
      {
        test: {
          ...shared,
          name: 'e2e',
          sequence: { groupOrder: 2 },
          include: ['test/**/*.e2e.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          // End-to-end files start whole services; two at a time keeps a 2-core machine responsive.
          maxWorkers: 2,
        },
      },
      {
        test: {
          ...shared,
          name: 'browser',
          sequence: { groupOrder: 3 },
          include: ['test/browser/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          maxWorkers: 1,
        },
      },
    ],
  },
});
