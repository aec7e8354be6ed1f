// The boundary every tool of this package passes through. Pi quotes a call's arguments in full when they fail
// its schema check, and a tool result is shown to the user as it is; here both are kept short and printable.
import { validateToolArguments, type ToolCall } from "@earendil-works/pi-ai";
import type { ToolDefinition } from "@earendil-works/pi-coding-agent";
import type { TSchema } from "typebox";
import { bounded, printable } from "../log/display.ts";

/** The most text one tool result may hold; recall pages and caps its own output well below it. */
export const TOOL_RESULT_MAX_CHARS = 20_000;
/** The most of one argument value Pi's validation error may quote. */
const QUOTE_MAX_CHARS = 200;
const ERROR_MAX_CHARS = 2_000;

/** A copy of `value` small enough to quote: strings cut and escaped, collections truncated, depth limited. */
function quotable(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return bounded(printable(value), QUOTE_MAX_CHARS);
  if (value === null || typeof value !== "object") return value;
  if (depth >= 4) return Array.isArray(value) ? [] : {};
  if (Array.isArray(value)) return value.slice(0, 20).map((v) => quotable(v, depth + 1));
  return Object.fromEntries(
    Object.entries(value)
      .slice(0, 20)
      .map(([k, v]) => [bounded(printable(k), 60), quotable(v, depth + 1)]),
  );
}

/** Throw a clean error when `params` no longer match the tool's schema. */
function recheckArguments(def: { name: string; parameters: TSchema }, id: string, params: unknown): void {
  try {
    validateToolArguments(def as never, {
      type: "toolCall",
      id,
      name: def.name,
      arguments: params as ToolCall["arguments"],
    });
  } catch (error) {
    // Pi's message ends with the arguments in full; what failed is said before them.
    const reason = (error instanceof Error ? error.message : String(error)).split("\n\nReceived arguments")[0];
    throw new Error(
      `${def.name}: its arguments were changed after Pi validated them (by another extension) and no longer fit the tool. ${bounded(reason, 600)}`,
    );
  }
}

/**
 * Wrap a tool definition: arguments that will fail Pi's schema check are first reduced (so the error quoting them
 * stays short), and every result or error text is escaped and bounded.
 */
export function guardedTool<P extends TSchema, D, S>(def: ToolDefinition<P, D, S>): ToolDefinition<P, D, S> {
  const prepare = def.prepareArguments;
  return {
    ...def,
    prepareArguments: (args: unknown) => {
      const prepared = prepare ? prepare(args) : args;
      try {
        const call: ToolCall = {
          type: "toolCall",
          id: "check",
          name: def.name,
          arguments: prepared as ToolCall["arguments"],
        };
        validateToolArguments(def as never, call);
        return prepared as never;
      } catch {
        // Pi's own check will reject these arguments too; only the copy it quotes changes.
        return quotable(prepared) as never;
      }
    },
    execute: async (...args: Parameters<typeof def.execute>) => {
      try {
        // Pi validates before its tool_call handlers run, and they may change the arguments in place; check again so
        // a changed argument gets an answer naming it, not a TypeError from deep inside the tool.
        recheckArguments(def, args[0], args[1]);
        const result = await def.execute(...args);
        return {
          ...result,
          content: result.content.map((c) =>
            c.type === "text" ? { ...c, text: bounded(printable(c.text), TOOL_RESULT_MAX_CHARS) } : c,
          ),
        };
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        throw new Error(bounded(printable(message), ERROR_MAX_CHARS));
      }
    },
  };
}
