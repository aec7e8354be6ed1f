import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    setupFiles: ["test/setup/fast-check.ts"],
    // Every temporary file of the run (the tests' and their CLIs') goes under one folder, removed at the end.
    globalSetup: ["test/setup/scratch-dir.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, "test/certification/**"],
        },
      },
      // The certification suite packs and installs the package once per run; its setup runs only when one of
      // its files is selected.
      {
        extends: true,
        test: {
          name: "certification",
          include: ["test/certification/**/*.test.ts"],
          globalSetup: ["test/certification/support/global-setup.ts"],
        },
      },
    ],
  },
});
