// The model view one lab row maintains during a replay, with running token sums and change tracking, so
// each request's size and cached prefix cost O(changes) rather than O(session).
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { messageTokens, type RequestTokens, sameMessage } from "./metrics.ts";

/** Hears every message that enters or leaves a view (the working-set measure keeps its counts with it). */
export interface ViewObserver {
  added(message: AgentMessage): void;
  removed(message: AgentMessage): void;
}

export class View {
  private items: AgentMessage[] = [];
  private observer: ViewObserver | undefined;
  /** sums[i]: tokens of items[0..i). */
  private sums: number[] = [0];
  /** Lowest index changed since the last request. */
  private dirty = 0;

  get messages(): readonly AgentMessage[] {
    return this.items;
  }

  /** Tell `observer` about every message in the view now and every change from here on (one observer per view). */
  observe(observer: ViewObserver): void {
    this.observer = observer;
    for (const message of this.items) observer.added(message);
  }

  get length(): number {
    return this.items.length;
  }

  get tokens(): number {
    return this.sums[this.items.length];
  }

  /** Tokens of the first `count` messages. */
  tokensBefore(count: number): number {
    return this.sums[count];
  }

  push(message: AgentMessage): void {
    this.items.push(message);
    this.observer?.added(message);
    this.sums.push(this.sums[this.sums.length - 1] + messageTokens(message));
  }

  /** Replace the message at `index` (a masked or cleared output). */
  replaceAt(index: number, message: AgentMessage): void {
    this.replaceMany([[index, message]]);
  }

  /** Replace several messages at once; token sums are recomputed once from the lowest index. */
  replaceMany(changes: readonly (readonly [number, AgentMessage])[]): void {
    let low = Infinity;
    for (const [index, message] of changes) {
      if (this.items[index] === message) continue;
      this.observer?.removed(this.items[index]);
      this.observer?.added(message);
      this.items[index] = message;
      low = Math.min(low, index);
    }
    if (low === Infinity) return;
    this.dirty = Math.min(this.dirty, low);
    for (let i = low; i < this.items.length; i++) this.sums[i + 1] = this.sums[i] + messageTokens(this.items[i]);
  }

  /** Replace everything (after a compaction or fold); the unchanged leading messages stay cached. */
  replaceAll(messages: readonly AgentMessage[]): void {
    this.replaceFrom(0, messages);
  }

  /**
   * Keep the first `keep` messages, which the caller knows are unchanged, and replace the rest by `tail`: the same
   * view, token sums and cached prefix as `replaceAll` of the whole list, for work that grows with the tail only.
   */
  replaceFrom(keep: number, tail: readonly AgentMessage[]): void {
    const old = this.items;
    const tokens = tail.map(messageTokens);
    const shared = this.sameFrom(
      keep,
      Math.min(old.length, keep + tail.length),
      (i) => tail[i - keep],
      (i) => tokens[i - keep],
    );
    this.dirty = Math.min(this.dirty, shared);
    if (this.observer) {
      // The shared prefix puts the same bytes on the wire, so only what follows it changes what the view holds; of
      // that, a message object on both sides (kept by a compaction, before a fold) neither leaves nor enters.
      const staying = new Map<AgentMessage, number>();
      for (let i = shared - keep; i < tail.length; i++) staying.set(tail[i], (staying.get(tail[i]) ?? 0) + 1);
      for (let i = shared; i < old.length; i++) {
        const left = staying.get(old[i]);
        if (left) staying.set(old[i], left - 1);
        else this.observer.removed(old[i]);
      }
      const entering = new Map<AgentMessage, number>();
      for (let i = shared; i < old.length; i++) entering.set(old[i], (entering.get(old[i]) ?? 0) + 1);
      for (let i = shared - keep; i < tail.length; i++) {
        const held = entering.get(tail[i]);
        if (held) entering.set(tail[i], held - 1);
        else this.observer.added(tail[i]);
      }
    }
    old.length = keep;
    for (const m of tail) old.push(m);
    this.sums.length = shared + 1;
    for (let i = shared; i < old.length; i++) this.sums.push(this.sums[i] + tokens[i - keep]);
  }

  /**
   * Drop the oldest `count` messages (a sliding window): the same view, token sums, cached prefix and observer counts
   * as `replaceAll` of the rest, without comparing or counting the messages that stay.
   */
  dropFirst(count: number): void {
    if (count <= 0) return;
    const old = this.items;
    const shared = this.sameFrom(
      0,
      old.length - count,
      (i) => old[i + count],
      (i) => this.sums[i + count + 1] - this.sums[i + count],
    );
    this.dirty = Math.min(this.dirty, shared);
    // Of the messages after the shared prefix, the leaving ones are the `count` there minus those that stay: as a
    // multiset, exactly old[shared, shared + count).
    if (this.observer) for (let i = shared; i < shared + count; i++) this.observer.removed(old[i]);
    old.splice(0, count);
    const base = this.sums[count];
    for (let i = 0; i + count < this.sums.length; i++) this.sums[i] = this.sums[i + count] - base;
    this.sums.length -= count;
  }

  /**
   * The end of the run from `start` (before `end`) where the view's message i puts the same bytes on the wire as
   * `next(i)`, whose token estimate is `tokensOf(i)`: what stays cached when those replace the view's. Equal bytes have
   * equal estimates, so a count that differs settles a comparison without the bytes.
   */
  private sameFrom(
    start: number,
    end: number,
    next: (i: number) => AgentMessage,
    tokensOf: (i: number) => number,
  ): number {
    let i = start;
    while (
      i < end &&
      (this.items[i] === next(i) ||
        (this.sums[i + 1] - this.sums[i] === tokensOf(i) && sameMessage(this.items[i], next(i))))
    )
      i++;
    return i;
  }

  /** Close a request: its prompt size and the tokens it shares with the previous request. */
  markRequest(): RequestTokens {
    const shared = Math.min(this.dirty, this.items.length);
    const result = { prompt: this.tokens, cached: this.sums[shared] };
    this.dirty = this.items.length;
    return result;
  }
}
