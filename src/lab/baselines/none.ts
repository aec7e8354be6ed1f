// Baseline: no context management at all. The view is the whole branch; requests past the window would fail.
import type { SessionEntry } from "../../log/entries.ts";
import { type Row, type RowFactory, visibleMessages } from "../row.ts";
import { View } from "../view.ts";

export const noCompaction: RowFactory = (): Row => {
  const view = new View();
  return {
    info: {
      id: "none",
      label: "no compaction",
      family: "baseline",
      note: "everything stays; requests past the window would be rejected",
    },
    view,
    append(entry: SessionEntry) {
      for (const m of visibleMessages(entry)) view.push(m);
    },
    beforeRequest: () => undefined,
  };
};
