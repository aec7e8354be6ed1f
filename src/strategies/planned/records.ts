// The records the planned strategy (and the fallback to Pi's compaction it shares) writes. Neither changes the view:
// they are counted and shown on cards. A leaf module (it imports nothing). Pure.

/** custom (not in context): a compaction strategy failed and Pi compacted natively; counts only. */
export const PLANNER_FAILURE_RECORD = "context-ledger/planner-failure";
/** custom (not in context): the native compaction that followed a planner failure, for its own card. */
export const NATIVE_COMPACTION_RECORD = "context-ledger/native-compaction";
