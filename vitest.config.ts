import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1, isolate: false } },
    testTimeout: 30000,
    hookTimeout: 60000,
  },
});
