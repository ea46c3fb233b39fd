import { defineConfig } from 'vitest/config';

// Units run anywhere; integration specs need a real Podman and the sandbox image (scripts/setup.sh).
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['shared/**/*.spec.ts', 'electron/**/*.spec.ts', 'renderer/**/*.spec.ts'],
          exclude: ['**/*.int.spec.ts', 'node_modules/**'],
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['electron/**/*.int.spec.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          // One engine, two cores: run integration files one at a time.
          fileParallelism: false,
          globalSetup: ['electron/test-support/global-setup.ts'],
        },
      },
    ],
  },
});
