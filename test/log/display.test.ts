import { describe, expect, it } from "vitest";
import { bounded, printable, quoted } from "../../src/log/display.ts";

describe("display text", () => {
  it("escapes every control byte a terminal would act on, keeping tab and newline", () => {
    expect(printable("a\u001b[2Jb\u0000c\td\ne\u009bf\u007f")).toBe("a\\u001b[2Jb\\u0000c\td\ne\\u009bf\\u007f");
    expect(printable("plain ünïcode 😀")).toBe("plain ünïcode 😀");
  });

  it("bounds length with a marker and never splits a surrogate pair", () => {
    expect(bounded("short", 10)).toBe("short");
    const cut = bounded("😀".repeat(100), 60);
    expect(cut.length).toBeLessThanOrEqual(60);
    expect(cut).toMatch(/\[cut: 200 chars in all\]$/);
    expect(() => encodeURIComponent(cut)).not.toThrow(); // no lone surrogate
  });

  it("quotes any value as short, printable JSON", () => {
    expect(quoted("abc")).toBe('"abc"');
    expect(quoted({ a: [1, 2] })).toBe('{"a":[1,2]}');
    const huge = quoted(`\u009b${"x".repeat(1_000_000)}`);
    expect(huge.length).toBeLessThanOrEqual(82);
    expect(huge).toMatch(/^"\\u009bxxx/);
    expect(quoted("\u0007".repeat(500)).length).toBeLessThanOrEqual(82);
  });
});
