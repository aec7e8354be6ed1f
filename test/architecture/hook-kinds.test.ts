// Every event hook of a strategy says how the answers of several strategies combine: each is in exactly one of the
// four kinds, and each is named after the Pi event it hears. The first check is a type check (tsc reads it).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, expectTypeOf, it } from "vitest";
import type {
  AccumulatingHook,
  ChainedHook,
  EventHooks,
  FirstAnswerHook,
  SequentialHook,
} from "../../src/strategies/contract.ts";

type Kinds = SequentialHook | FirstAnswerHook | ChainedHook | AccumulatingHook;

/** `before_agent_start` → `beforeAgentStart`. */
const camel = (event: string) => event.replace(/_(\w)/g, (_, c: string) => c.toUpperCase());

describe("strategy event hooks", () => {
  it("each hook has exactly one combination kind", () => {
    expectTypeOf<Kinds>().toEqualTypeOf<keyof EventHooks>();
    expectTypeOf<SequentialHook & FirstAnswerHook>().toBeNever();
    expectTypeOf<SequentialHook & ChainedHook>().toBeNever();
    expectTypeOf<SequentialHook & AccumulatingHook>().toBeNever();
    expectTypeOf<FirstAnswerHook & ChainedHook>().toBeNever();
    expectTypeOf<ChainedHook & AccumulatingHook>().toBeNever();
  });

  it("every hook the host calls is named after a Pi event the host handles", () => {
    const source = readFileSync(join(import.meta.dirname, "../../src/host/extension.ts"), "utf8");
    const handled = new Set([...source.matchAll(/\bpi\.on\("(\w+)"/g)].map((m) => camel(m[1])));
    // `appliesTo` is a question put to the configured strategy, not an event.
    const called = [...new Set([...source.matchAll(/\.hooks\.(\w+)\?\.\(/g)].map((m) => m[1]))].filter(
      (hook) => hook !== "appliesTo",
    );
    expect(called.length).toBeGreaterThanOrEqual(11);
    expect(called.filter((hook) => !handled.has(hook))).toEqual([]);
  });
});
