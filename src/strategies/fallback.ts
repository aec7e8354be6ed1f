// What every compaction strategy shares when its attempt ends in Pi's native compaction: the planning error with its
// category, the bounded failure record and the cards of both. They were written for the planned strategy and live
// there; the host reaches them through this module, so it names no strategy.
export { PlanError } from "./planned/apply.ts";
export {
  failureCardLines,
  failureDetails,
  nativeCardLines,
  type NativeCompactionDetails,
  type PlannerFailureDetails,
} from "./planned/report.ts";
