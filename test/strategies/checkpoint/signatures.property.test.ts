import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { abbreviateCwd, displayPath } from "../../../src/strategies/shared/paths.ts";
import {
  ARGUMENT_PREFIX_CHARS,
  capEncoded,
  ELLIPSIS,
  formatArguments,
  formatSignature,
  jsonPrefix,
} from "../../../src/strategies/shared/signatures.ts";

const CWD = "/home/dev/repo";

describe("display paths", () => {
  it("makes paths inside the cwd relative and keeps the rest complete", () => {
    expect(displayPath("/home/dev/repo/src/a.ts", CWD)).toBe("src/a.ts");
    expect(displayPath("/home/dev/repo", CWD)).toBe(".");
    expect(displayPath("/home/dev/repo2/x.ts", CWD)).toBe("/home/dev/repo2/x.ts");
    expect(displayPath("/etc/hosts", CWD)).toBe("/etc/hosts");
    expect(displayPath("./src//b.ts", CWD)).toBe("src/b.ts");
    // A path that climbs out of the cwd is one file with its absolute spelling (issue 24, item 15).
    expect(displayPath("../other/c.ts", CWD)).toBe("/home/dev/other/c.ts");
    expect(displayPath("../other/c.ts", CWD)).toBe(displayPath("/home/dev/other/c.ts", CWD));
    expect(displayPath("src/../../other/c.ts", CWD)).toBe("/home/dev/other/c.ts");
    expect(displayPath("~/notes.md", CWD)).toBe("~/notes.md");
  });

  it("shortens the cwd in commands only at path boundaries", () => {
    expect(abbreviateCwd("cd /home/dev/repo && ls /home/dev/repo/src", CWD)).toBe("cd . && ls ./src");
    expect(abbreviateCwd('cat "/home/dev/repo/a b.txt"', CWD)).toBe('cat "./a b.txt"');
    expect(abbreviateCwd("ls /home/dev/repo2 /x/home/dev/repo", CWD)).toBe("ls /home/dev/repo2 /x/home/dev/repo");
    expect(abbreviateCwd("echo --dir=/home/dev/repo/", CWD)).toBe("echo --dir=./");
    expect(abbreviateCwd("ls /", "/")).toBe("ls /");
  });
});

describe("argument prefixes", () => {
  it("caps JSON at 160 characters with a single ellipsis", () => {
    const long = "x".repeat(500);
    const out = jsonPrefix(long);
    expect(out).toBe(`"${"x".repeat(ARGUMENT_PREFIX_CHARS - 1)}${ELLIPSIS}`);
    expect(out.split(ELLIPSIS)).toHaveLength(2);
    expect(jsonPrefix("short")).toBe('"short"');
  });

  it("never splits an escape sequence or a surrogate pair", () => {
    // 158 chars then an escape that would straddle the cut.
    const escaped = capEncoded(JSON.stringify(`${"a".repeat(158)}\n${"b".repeat(10)}`));
    expect(escaped).toBe(`"${"a".repeat(158)}${ELLIPSIS}`);
    const emoji = capEncoded(JSON.stringify(`${"a".repeat(158)}😀😀`));
    expect(emoji.endsWith(ELLIPSIS)).toBe(true);
    expect(emoji).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
    const control = capEncoded(JSON.stringify(`${"a".repeat(155)}\u0001zz`));
    expect(control).toBe(`"${"a".repeat(155)}${ELLIPSIS}`);
  });

  it("keeps every prefix a prefix of the full encoding (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const full = JSON.stringify(value) ?? "null";
        const out = jsonPrefix(value);
        if (full.length <= ARGUMENT_PREFIX_CHARS) return out === full;
        const kept = out.slice(0, -ELLIPSIS.length);
        return (
          out.endsWith(ELLIPSIS) &&
          full.startsWith(kept) &&
          kept.length <= ARGUMENT_PREFIX_CHARS &&
          kept.length >= ARGUMENT_PREFIX_CHARS - 12
        );
      }),
    );
  });
});

describe("tool-call signatures", () => {
  it("keeps complete file paths, relative to the cwd", () => {
    const deep = `/home/dev/repo/${"very-long-directory-name/".repeat(10)}file.ts`;
    const sig = formatSignature({ id: "1", name: "read", arguments: { path: deep, offset: 10, limit: 50 } }, "ok", CWD);
    expect(sig).toBe(`read path=${JSON.stringify(deep.slice(CWD.length + 1))} offset=10 limit=50 → ok`);
    expect(formatSignature({ id: "2", name: "read", arguments: { path: "/opt/other/ünï.md" } }, "error", CWD)).toBe(
      'read path="/opt/other/ünï.md" → error',
    );
  });

  it("reduces write bodies and edit texts to sizes", () => {
    expect(formatArguments("write", { path: "a.ts", content: "line1\nline2" }, CWD)).toBe(
      'path="a.ts" content=(11 chars)',
    );
    expect(
      formatArguments(
        "edit",
        {
          path: "a.ts",
          edits: [
            { oldText: "a", newText: "b" },
            { oldText: "c", newText: "d" },
          ],
        },
        CWD,
      ),
    ).toBe('path="a.ts" edits=2');
    expect(formatArguments("edit", { path: "a.ts", oldText: "abc", newText: "abcdef" }, CWD)).toBe(
      'path="a.ts" oldText=(3 chars) newText=(6 chars)',
    );
  });

  it("keeps multi-line commands whole up to the cap, with the cwd shown as .", () => {
    const command = "cd /home/dev/repo\nnpm test\nnpm run lint";
    expect(formatArguments("bash", { command }, CWD)).toBe('command="cd .\\nnpm test\\nnpm run lint"');
    const long = `cd /home/dev/repo && ${"echo ünïcødé 😀; ".repeat(20)}`;
    const out = formatArguments("bash", { command: long, timeout: 30 }, CWD);
    expect(out.startsWith('command="cd . && echo')).toBe(true);
    expect(out.endsWith(`${ELLIPSIS} timeout=30`)).toBe(true);
    expect(out.split(ELLIPSIS)).toHaveLength(2);
  });

  it("renders other tools' arguments as capped JSON, long JSON included", () => {
    const args = {
      query: { filters: Array.from({ length: 40 }, (_, i) => ({ field: `f${i}`, op: "eq" })) },
      "odd key": true,
    };
    const sig = formatSignature({ id: "3", name: "mcp__search", arguments: args }, "unknown", CWD);
    expect(sig.startsWith('mcp__search query={"filters":[{"field":"f0"')).toBe(true);
    expect(sig).toContain(`${ELLIPSIS} "odd key"=true → unknown`);
    expect(formatSignature({ id: "4", name: "weird name", arguments: ["a", 1] }, "ok", CWD)).toBe(
      '"weird name" ["a",1] → ok',
    );
  });

  it("is a single line whatever the arguments hold (property)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("read", "write", "edit", "bash", "other"),
        fc.dictionary(fc.string(), fc.jsonValue()),
        (name, args) => {
          const sig = formatSignature({ id: "x", name, arguments: args }, "ok", CWD);
          return !sig.includes("\n") && sig.endsWith(" → ok");
        },
      ),
    );
  });
});
