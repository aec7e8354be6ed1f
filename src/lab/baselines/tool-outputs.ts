// Shared helpers for baselines that blank old tool outputs with a placeholder (masking, clearing, prune).
import type { AgentMessage } from "@earendil-works/pi-agent-core";

const placeholders = new WeakMap<AgentMessage, Map<string, AgentMessage>>();

/** The tool result with its output replaced by `text` (memoized, so repeated requests stay byte-stable). */
export function blanked(message: AgentMessage, text: string): AgentMessage {
  let byText = placeholders.get(message);
  if (!byText) {
    byText = new Map();
    placeholders.set(message, byText);
  }
  let out = byText.get(text);
  if (!out) {
    out = { ...message, content: [{ type: "text", text }] } as AgentMessage;
    byText.set(text, out);
  }
  return out;
}

/** Line count of a tool result's text output. */
export function outputLines(message: AgentMessage): number {
  const content = (message as { content?: unknown }).content;
  let text = "";
  if (typeof content === "string") text = content;
  else if (Array.isArray(content))
    for (const block of content as { type?: string; text?: string }[])
      if (block?.type === "text") text += block.text ?? "";
  return text ? text.split("\n").length : 0;
}
