// The pure side of the project scope: a source of in-memory sessions stands in for the directory, so paging across
// sessions, the per-call bounds, cursors and the name and header checks are tested without files.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AssistantMessage } from "@earendil-works/pi-ai";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { LOOKUP_TOOLS, runLookup, type LookupRequest } from "../../src/recall/lookup.ts";
import {
  branchOf,
  checkSessionName,
  grepProject,
  listProjectSessions,
  orderSessions,
  parseSessionHeader,
  resolveSession,
  type ProjectBounds,
  type ProjectSession,
  type ProjectSource,
} from "../../src/recall/project.ts";
import { grepTranscript } from "../../src/recall/search.ts";
import { recallLimits } from "../../src/recall/settings.ts";
import { buildTranscript, type TranscriptIndex } from "../../src/recall/transcript.ts";
import { hostileStringArb } from "../arbitraries/hostile.ts";
import { Branch } from "./fixtures.ts";

const limits = recallLimits({});

/** A session whose one user message says `text`, padded with `filler` entries. */
function sessionIndex(text: string, filler = 0): TranscriptIndex {
  const b = new Branch();
  for (let i = 0; i < filler; i++) b.user(`filler line ${i} ${"x".repeat(200)}`);
  b.user(text);
  return buildTranscript(b.entries);
}

interface Fake {
  source: ProjectSource;
  opened: string[];
  pauses: number;
}

/** `count` earlier sessions, the newest first (s<count-1> … s0), each with one hit; the current session has one. */
function fakeProject(count: number, options: { size?: number; cached?: boolean; filler?: number } = {}): Fake {
  const earlier: ProjectSession[] = [];
  const indexes = new Map<string, TranscriptIndex>();
  for (let i = 0; i < count; i++) {
    const id = `s${String(i).padStart(3, "0")}`;
    earlier.push({
      id,
      file: `2025-01-${String(i + 1).padStart(2, "0")}_${id}.jsonl`,
      started: `2025-01-${String((i % 28) + 1).padStart(2, "0")}T00:00:${String(i % 60).padStart(2, "0")}.000Z`,
      size: options.size ?? 1000,
    });
    indexes.set(id, sessionIndex(`NEEDLE from ${id}`, options.filler ?? 0));
  }
  const fake: Fake = {
    opened: [],
    pauses: 0,
    source: {
      current: {
        id: "current-1",
        started: "2026-01-01T00:00:00.000Z",
        index: sessionIndex("NEEDLE from the current session"),
      },
      earlier: orderSessions(earlier),
      skipped: { damaged: 2, otherProject: 1 },
      isCached: () => options.cached === true,
      open: async (s) => {
        fake.opened.push(s.id);
        return indexes.get(s.id) ?? "gone";
      },
      pause: async () => {
        fake.pauses++;
      },
    },
  };
  return fake;
}

/** Every page of a project-scope grep, following cursors; the sessions of all hits in order. */
async function allPages(fake: Fake, bounds: ProjectBounds, pattern = "NEEDLE") {
  const sessions: string[] = [];
  const pages: { opened: number; text: string }[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 100; i++) {
    const before = fake.opened.length;
    const out = await grepProject(fake.source, { pattern, literal: true, cursor }, limits, bounds);
    if (!out.ok) throw new Error(out.error);
    sessions.push(...out.details.matches.map((m) => m.session));
    pages.push({ opened: fake.opened.length - before, text: out.text });
    cursor = out.nextCursor;
    if (!cursor) return { sessions, pages };
  }
  throw new Error("no end");
}

describe("project-scope grep", () => {
  it("searches this session, then the earlier ones newest first, each hit naming its session and start date", async () => {
    const fake = fakeProject(3);
    const out = await grepProject(fake.source, { pattern: "needle", literal: true }, limits);
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(out.details.matches.map((m) => m.session)).toEqual(["current-1", "s002", "s001", "s000"]);
    expect(out.details.matches[0]).toMatchObject({ current: true, sessionStarted: "2026-01-01T00:00:00.000Z" });
    expect(out.details.matches[1]).toMatchObject({
      current: false,
      sessionFile: "2025-01-03_s002.jsonl",
      sessionStarted: "2025-01-03T00:00:02.000Z",
    });
    expect(out.text).toContain("══ session this session current-1");
    expect(out.text).toContain("══ session s002 · started 2025-01-03T00:00:02.000Z · file 2025-01-03_s002.jsonl");
    expect(out.text).toMatch(
      /── entry \S+ · user · \S+ · in \[text\] · session s001 \(started 2025-01-02T00:00:01\.000Z\)/,
    );
    expect(out.text).toContain("Skipped 2 files of the session directory");
    expect(out.nextCursor).toBeUndefined();
  });

  it("opens at most sessionsPerCall earlier sessions per call; the cursors lead through all of them, each hit once", async () => {
    const fake = fakeProject(30);
    const { sessions, pages } = await allPages(
      fake,
      { sessionsPerCall: 7, readBytesPerCall: 1e12, sliceWork: 1e9 },
      "NEEDLE from",
    );
    const expected = ["current-1", ...fake.source.earlier.map((s) => s.id)];
    // Eight results fit a page; every session is searched once, in order, whatever bound stopped each page.
    expect(sessions).toEqual(expected);
    expect(new Set(fake.opened).size).toBe(fake.opened.length);
    expect(Math.max(...pages.map((p) => p.opened))).toBeLessThanOrEqual(7);
  });

  it("reads at most readBytesPerCall of uncached files per call, but always one file", async () => {
    const fake = fakeProject(5, { size: 600 });
    const { sessions, pages } = await allPages(fake, { sessionsPerCall: 100, readBytesPerCall: 1000, sliceWork: 1e9 });
    expect(sessions).toEqual(["current-1", "s004", "s003", "s002", "s001", "s000"]);
    expect(pages.map((p) => p.opened)).toEqual([1, 1, 1, 1, 1]);
    expect(pages[0].text).toContain("the search continues in session s003");
    // Cached files cost no reading: one call opens them all.
    const cached = fakeProject(5, { size: 600, cached: true });
    expect(
      (await allPages(cached, { sessionsPerCall: 100, readBytesPerCall: 1000, sliceWork: 1e9 })).pages,
    ).toHaveLength(1);
  });

  it("pauses between slices of a long session and finds the same as an unsliced scan", async () => {
    const fake = fakeProject(1, { filler: 400 });
    const sliced = await grepProject(fake.source, { pattern: "needle from s000", literal: true }, limits, {
      sessionsPerCall: 10,
      readBytesPerCall: 1e12,
      sliceWork: 5_000,
    });
    if (!sliced.ok) throw new Error(sliced.error);
    expect(fake.pauses).toBeGreaterThan(10);
    const index = await fake.source.open(fake.source.earlier[0]);
    const plain = grepTranscript(index as TranscriptIndex, { pattern: "needle from s000", literal: true }, limits);
    if (!plain.ok) throw new Error(plain.error);
    expect(sliced.details.matches.map((m) => [m.entryId, m.line])).toEqual(
      plain.details.matches.map((m) => [m.entryId, m.line]),
    );
  });

  it("refuses a cursor of another query, of a session that left the list, and of an entry that changed", async () => {
    const fake = fakeProject(20);
    const first = await grepProject(fake.source, { pattern: "NEEDLE", literal: true }, limits, {
      sessionsPerCall: 2,
      readBytesPerCall: 1e12,
      sliceWork: 1e9,
    });
    if (!first.ok || !first.nextCursor) throw new Error("expected a cursor");
    const other = await grepProject(fake.source, { pattern: "other", literal: true, cursor: first.nextCursor }, limits);
    expect(other).toMatchObject({ ok: false, error: expect.stringContaining("different query") });
    const gone = {
      ...fake.source,
      earlier: fake.source.earlier.filter((s) => !first.nextCursor!.includes(`:${s.id}~`)),
    };
    expect(
      await grepProject(gone, { pattern: "NEEDLE", literal: true, cursor: first.nextCursor }, limits),
    ).toMatchObject({ ok: false, error: expect.stringContaining("no longer in the project's list") });
    const forged = first.nextCursor.replace(/~\d+~/, "~0~zzzz");
    expect(await grepProject(fake.source, { pattern: "NEEDLE", literal: true, cursor: forged }, limits)).toMatchObject({
      ok: false,
    });
    // A single-session cursor is not a project cursor.
    const single = grepTranscript(
      fake.source.current.index,
      { pattern: "e", cursor: undefined },
      recallLimits({ grepMaxResults: 1 }),
    );
    if (!single.ok || !single.nextCursor) throw new Error("expected a single-session cursor");
    expect(
      await grepProject(fake.source, { pattern: "e", cursor: single.nextCursor }, recallLimits({ grepMaxResults: 1 })),
    ).toMatchObject({ ok: false });
  });

  it("counts a session that cannot be read and goes on", async () => {
    const fake = fakeProject(3);
    const broken = {
      ...fake.source,
      open: async (s: ProjectSession) => (s.id === "s001" ? "the file could not be read" : fake.source.open(s)),
    };
    const out = await grepProject(broken, { pattern: "NEEDLE", literal: true }, limits);
    if (!out.ok) throw new Error(out.error);
    expect(out.details.matches.map((m) => m.session)).toEqual(["current-1", "s002", "s000"]);
    expect(out.details.unreadable).toEqual(["s001"]);
    expect(out.text).toContain("Skipped 3 files");
  });
});

describe("project session listing", () => {
  it("lists id, start date, first user message and entries, newest first, paged", async () => {
    const fake = fakeProject(60);
    const out = await listProjectSessions(fake.source, {}, limits);
    if (!out.ok) throw new Error(out.error);
    expect(out.details.sessions[0]).toMatchObject({
      id: "current-1",
      current: true,
      entries: 1,
      firstUserMessage: "NEEDLE from the current session",
    });
    expect(out.details.sessions[1]).toMatchObject({
      id: fake.source.earlier[0].id,
      file: fake.source.earlier[0].file,
      entries: 1,
      current: false,
    });
    expect(out.details.sessions.length).toBeLessThanOrEqual(26);
    expect(out.nextCursor).toBeDefined();
    const rest = await listProjectSessions(fake.source, { cursor: out.nextCursor }, limits);
    if (!rest.ok) throw new Error(rest.error);
    expect(rest.details.sessions[0].id).toBe(fake.source.earlier[out.details.sessions.length - 1].id);
  });
});

describe("names, headers and branches", () => {
  it("refuses paths and oversized names as session, and finds sessions by id, file name or an 8+ character prefix", () => {
    for (const bad of ["../x", "a/b", "a\\b", "/etc/passwd", "x..y", "nul\u0000", "x".repeat(300), "", 42])
      expect(checkSessionName(bad)).toHaveProperty("error");
    expect(checkSessionName(" s001 ")).toBe("s001");
    const sessions: ProjectSession[] = [
      { id: "01a2-aaaa-1111", file: "2025_01a2-aaaa-1111.jsonl", started: "b", size: 1 },
      { id: "01a2-aaaa-2222", file: "2025_01a2-aaaa-2222.jsonl", started: "a", size: 1 },
    ];
    expect(resolveSession(sessions, "01a2-aaaa-2222")).toBe(sessions[1]);
    expect(resolveSession(sessions, "2025_01a2-aaaa-1111.jsonl")).toBe(sessions[0]);
    expect(resolveSession(sessions, "2025_01a2-aaaa-1111")).toBe(sessions[0]);
    expect(resolveSession(sessions, "01a2-aaaa-1")).toBe(sessions[0]);
    expect(resolveSession(sessions, "01a2-aaaa")).toContain("ambiguous");
    expect(resolveSession(sessions, "01a2")).toContain("no earlier session");
  });

  it("accepts only a session header with a plain id, a cwd and a timestamp", () => {
    expect(
      parseSessionHeader(
        JSON.stringify({ type: "session", id: "abc-1", cwd: "/p", timestamp: "2025-01-01T00:00:00.000Z" }),
      ),
    ).toEqual({ id: "abc-1", cwd: "/p", started: "2025-01-01T00:00:00.000Z" });
    for (const bad of [
      "{",
      "[]",
      "null",
      JSON.stringify({ type: "message" }),
      JSON.stringify({ type: "session", id: "../x", cwd: "/p", timestamp: "t" }),
      JSON.stringify({ type: "session", id: "a", timestamp: "t" }),
    ]) {
      expect(typeof parseSessionHeader(bad)).toBe("string");
    }
  });

  it("takes the branch a session resumes on, ending a walk at a missing parent or a cycle", () => {
    const e = (id: string, parentId: string | null) =>
      ({ type: "label", id, parentId, timestamp: "t", targetId: id }) as unknown as SessionEntry;
    expect(branchOf([e("a", null), e("b", "a"), e("x", "a"), e("c", "b")]).map((x) => x.id)).toEqual(["a", "b", "c"]);
    expect(branchOf([e("a", null), e("b", "a"), e("c", "gone")]).map((x) => x.id)).toEqual(["c"]);
    expect(branchOf([e("a", "b"), e("b", "a")]).map((x) => x.id)).toEqual(["a", "b"]);
    expect(branchOf([])).toEqual([]);
  });
});

describe("hostile session names and cursors", () => {
  it("any string as session is refused with a short error or resolves to a listed session, and a name with a path part never resolves", () => {
    const sessions = fakeProject(4).source.earlier;
    fc.assert(
      fc.property(
        fc.oneof(
          hostileStringArb,
          fc.constantFrom(...sessions.map((s) => s.id)),
          fc.string().map((x) => `../${x}`),
          fc.string().map((x) => `${x}/${x}`),
        ),
        (raw) => {
          const name = checkSessionName(raw);
          if (typeof name !== "string") {
            expect(name.error.length).toBeLessThan(400);
            return;
          }
          expect(name).not.toMatch(/[/\\]|\.\./);
          const found = resolveSession(sessions, name);
          if (typeof found === "string") expect(found.length).toBeLessThan(400);
          else expect(sessions).toContain(found);
        },
      ),
    );
  });

  it("any string as a project cursor gives a bounded page or a short error", async () => {
    const fake = fakeProject(3);
    await fc.assert(
      fc.asyncProperty(hostileStringArb, async (cursor) => {
        const out = await grepProject(fake.source, { pattern: "NEEDLE", literal: true, cursor }, limits);
        if (out.ok) expect(out.text.length).toBeLessThanOrEqual(limits.maxChars);
        else expect(out.error.length).toBeLessThan(400);
      }),
    );
  });
});

describe("lookup with the project scope", () => {
  const reply = (content: AssistantMessage["content"]): AssistantMessage =>
    ({
      role: "assistant",
      content,
      api: "x",
      provider: "x",
      model: "x",
      usage: {
        input: 0,
        output: 0,
        cacheRead: 0,
        cacheWrite: 0,
        totalTokens: 0,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
      },
      stopReason: content.some((b) => b.type === "toolCall") ? "toolUse" : "stop",
      timestamp: 1,
    }) as AssistantMessage;

  it("offers scope and session only when the project scope is on, and runs such calls through the host", async () => {
    const index = sessionIndex("NEEDLE here");
    const seen: LookupRequest[] = [];
    const script = [
      reply([
        { type: "toolCall", id: "c1", name: "grep", arguments: { pattern: "NEEDLE", literal: true, scope: "project" } },
      ]),
      reply([{ type: "text", text: "answer" }]),
    ];
    const model = (replies: AssistantMessage[]) => async (request: LookupRequest) => {
      seen.push(request);
      return replies.shift()!;
    };
    const ran: string[] = [];
    const project = {
      run: async (name: string) => (
        ran.push(name), { ok: true as const, text: "══ session s1 · PROJECT PAGE", details: {} }
      ),
    };
    await runLookup({ question: "q", index, callModel: model([...script]), limits, now: 1, project });
    expect(ran).toEqual(["grep"]);
    expect(JSON.stringify(seen[0].tools)).toContain('"scope"');
    expect(seen[0].systemPrompt).toContain('scope: "project"');
    expect(JSON.stringify(seen[1].messages)).toContain("PROJECT PAGE");

    // Without it, the subagent's request is what it always was.
    const plain: LookupRequest[] = [];
    await runLookup({
      question: "q",
      index,
      callModel: async (request) => (plain.push(request), reply([{ type: "text", text: "answer" }])),
      limits,
      now: 1,
    });
    expect(plain[0].tools).toBe(LOOKUP_TOOLS);
    expect(plain[0].systemPrompt).not.toContain("project");
  });
});

describe("project page bounds", () => {
  it("keeps a page of many sessions' hits within the character bound, headings included, without cutting a result", async () => {
    const fake = fakeProject(40);
    const small = recallLimits({ grepMaxChars: 1_500, grepMaxResults: 50 });
    let cursor: string | undefined;
    let seen = 0;
    do {
      const out = await grepProject(fake.source, { pattern: "NEEDLE", literal: true, cursor }, small);
      if (!out.ok) throw new Error(out.error);
      expect(out.text.length).toBeLessThanOrEqual(1_500);
      expect(out.text).not.toContain("[result cut at the page limit]");
      seen += out.details.matches.length;
      cursor = out.nextCursor;
    } while (cursor);
    expect(seen).toBe(41);
  });
});
