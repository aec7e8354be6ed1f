// The session loader (host side) on generated files: a well-formed file loads exactly the entries Pi
// wrote; a truncated last line or a corrupt line anywhere costs only that line, reported by line number.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { loadSessionFile } from "../../src/host/session-file.ts";
import { ledgerArb, toJsonl } from "../arbitraries/index.ts";
import { propertyTimeout } from "../support/fast-check.ts";

const dir = mkdtempSync(join(tmpdir(), "ctx-ledger-load-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

function write(text: string): string {
  const file = join(dir, `s${n++}.jsonl`);
  writeFileSync(file, text);
  return file;
}

describe("session loading", () => {
  it(
    "loads a generated file's header and entries exactly, with no diagnostics",
    async () => {
      await fc.assert(
        fc.asyncProperty(ledgerArb(), async (ledger) => {
          const loaded = await loadSessionFile(write(toJsonl(ledger)));
          expect(loaded.diagnostics).toEqual([]);
          expect(loaded.header).toEqual(ledger.header);
          expect(loaded.entries).toEqual(JSON.parse(JSON.stringify(ledger.entries)));
        }),
      );
    },
    propertyTimeout(),
  );

  it(
    "a truncated last line is skipped with a diagnostic naming it; every earlier line survives",
    async () => {
      await fc.assert(
        fc.asyncProperty(
          ledgerArb({ minCommands: 1 }),
          fc.double({ min: 0, max: 1, noNaN: true }),
          async (ledger, where) => {
            fc.pre(ledger.entries.length > 0);
            const lines = toJsonl(ledger).split("\n").slice(0, -1);
            const last = lines[lines.length - 1];
            const cut = 1 + Math.floor(where * (last.length - 2)); // keep 1..len-1 characters: never valid JSON
            const text = [...lines.slice(0, -1), last.slice(0, cut)].join("\n");
            const loaded = await loadSessionFile(write(text));
            expect(loaded.diagnostics.map((d) => d.line)).toEqual([lines.length]);
            expect(loaded.entries).toEqual(JSON.parse(JSON.stringify(ledger.entries.slice(0, -1))));
          },
        ),
      );
    },
    propertyTimeout(),
  );

  it(
    "a corrupt line anywhere after the header costs only that line",
    async () => {
      await fc.assert(
        fc.asyncProperty(
          ledgerArb({ minCommands: 1 }),
          fc.nat(),
          fc.constantFrom("{not json", "[1,2]", '{"no":"type"}', "\u0000\u0001", '{"type":"message","id":'),
          async (ledger, at, garbage) => {
            const lines = toJsonl(ledger).split("\n").slice(0, -1);
            const index = 1 + (at % lines.length); // after the header, up to the end
            lines.splice(index, 0, garbage);
            const loaded = await loadSessionFile(write(`${lines.join("\n")}\n`));
            expect(loaded.diagnostics.map((d) => d.line)).toEqual([index + 1]);
            expect(loaded.entries).toEqual(JSON.parse(JSON.stringify(ledger.entries)));
          },
        ),
      );
    },
    propertyTimeout(),
  );
});
