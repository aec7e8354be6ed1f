// What the native strategy declares: it stands for Pi's own compaction, so a compaction entry without our details
// goes by its name. A leaf module (it imports only the log floor). Pure.
import type { StrategyFacts } from "../../log/facts.ts";

export const nativeFacts: StrategyFacts = { piCompaction: "native" };
