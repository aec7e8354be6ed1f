import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { SCRATCH_ENV } from "../setup/scratch-dir.ts";

describe("the suite's temporary files", () => {
  it("go under the run's scratch folder, which the global teardown removes", () => {
    const root = process.env[SCRATCH_ENV];
    expect(root, "vitest.config.ts must list test/setup/scratch-dir.ts as a globalSetup").toBeTruthy();
    expect(tmpdir()).toBe(root);
  });
});
