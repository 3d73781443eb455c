import picomatch from 'picomatch';
import { HOOK_AGENTS } from '../agents';
import type { GuardianConfig } from '../core/config';
import { Engine, LatestFindings, progressOf } from '../core/engine';
import { escapeRegExp } from '../core/guards';
import type { Finding } from '../core/finding';
import { AgentDiscovery, type Transcript } from './agentDiscovery';
import { AgentDocumentReader } from './agentDocument';
import { AgentLogReader } from './agentLog';
import { SessionDatabaseReader } from './sessionDatabase';
import type { EventRef, LocatedEvent, SkippedLine } from '../core/events';
import { EventLogReader, type EventSink } from './eventLog';
import { historyEvents, readInvocationHistory } from '../state/invocationHistory';
import { checkRegularFile, unreadableReason } from '../state/regularFile';
import { formatDescription } from './replay';
import { discoverFiles, resolvesInside } from './sourceDiscovery';
import { UnseenCalls } from './unseenCalls';
import type { Workspace } from '../state/workspace';

const KEEP_SKIPPED = 200;
const KEEP_FINDINGS = 1_000;

export interface MonitorUpdate {
  /** Findings raised since the last update (new episodes, or more severe than before). */
  readonly raised: Finding[];
  /** Lines skipped since the last update. */
  readonly skipped: SkippedLine[];
}

type Reader = EventLogReader | AgentLogReader | AgentDocumentReader | SessionDatabaseReader;

/**
 * The reader of an agent's transcript: appended lines read as they come, a document rewritten
 * whole read for what is new in it, or a database read for its sessions of the workspace.
 */
function transcriptReader(t: Transcript): AgentLogReader | AgentDocumentReader | SessionDatabaseReader {
  if (t.database !== undefined) return new SessionDatabaseReader(t.file, t.file, t.database.store, t.database);
  return t.adapter.layout === 'jsonl' ? new AgentLogReader(t.file, t.file, t.adapter) : new AgentDocumentReader(t.file, t.file, t.adapter, t.session !== undefined ? { session: t.session } : {});
}

/** A transcript of an agent working in this workspace, as the sidebar shows it. */
export interface AgentSource {
  readonly file: string;
  /** The agent's id in the registry (as `agents.<id>` in the configuration). */
  readonly agent: string;
  /** The agent's name, as people call it. */
  readonly label: string;
  readonly sessions: readonly string[];
  readonly events: number;
  /** The newest event's time, when events carry one. */
  readonly lastTs?: string;
  /** Its session is recorded by the agent's hook too: the transcript only adds the calls the hook never saw, and the session is shown once, by its hook log. */
  readonly hooked: boolean;
}

interface SourceInfo {
  readonly transcript: Transcript;
  readonly sessions: Set<string>;
  events: number;
  lastTs?: string;
}

/** What the events of one session tell about it. */
export interface SessionInfo {
  agent?: string;
  firstTs?: string;
  lastTs?: string;
  /** When its latest call was made (a refusal newer than it left no call running after it). */
  lastCallTs?: string;
}

const MAX_SESSION_INFO = 1000;

/** A hook log's name says whose session it records: `hook-<agent>-<session>.jsonl`. */
// Longer ids first: `hook-a-b-…` is agent `a-b`'s log, not agent `a`'s session "b-…".
const HOOK_IDS = HOOK_AGENTS.map((a) => a.id).sort((a, b) => b.length - a.length);
const HOOK_LOG = new RegExp(`(?:^|/)hook-(${HOOK_IDS.map(escapeRegExp).join('|')})-([^/]+)\\.jsonl$`);
/** The agents that reject some calls before their hook: a hooked session's transcript is read for those (unseenCalls.ts). */
const UNSEEN_IN_TRANSCRIPT = new Set(HOOK_AGENTS.filter((a) => a.hook.unseenInTranscript !== undefined).map((a) => a.id));

/** `<agent>:<session>` of a hook log, from its name. */
function hookLogKey(rel: string): string | undefined {
  const m = HOOK_LOG.exec(rel);
  return m ? `${m[1] as string}:${m[2] as string}` : undefined;
}

/**
 * Watches one workspace's logs: the JSONL event logs (read incrementally, one engine across them)
 * and seed 000's invocation history (at most 50 entries: re-checked whole when it changes).
 */
export class WorkspaceMonitor {
  private engine: Engine;
  private readonly sessions = new Map<string, SessionInfo>();
  private readers = new Map<string, Reader>();
  private readonly sources = new Map<string, SourceInfo>();
  private readonly discovery: AgentDiscovery;
  private historyFindings: Finding[] = [];
  /** Whether the invocation history exists (a log read, counted as one). */
  private historyPresent = false;
  private readonly historySeen = new Set<string>();
  private readonly isEventLog: (rel: string) => boolean;
  private readonly recentFindings: Finding[] = [];
  /** Each episode as it stood last, kept only for a one-shot read that lists the findings (`lastly`). */
  private readonly latest: LatestFindings | undefined;
  private readonly recentSkipped: SkippedLine[] = [];
  private skippedTotal = 0;
  /** Per log: events read and lines skipped since it was (re)started, to name the logs nothing could be read from. */
  private readonly perLog = new Map<string, { events: number; skipped: number }>();
  private needsRebuild = false;
  /** Files (and globs) reported as not read, with the reason: each reported once, until it changes. */
  private readonly fileProblems = new Map<string, string>();
  /** The sessions the hook records (`<agent>:<session>`), and the calls their transcripts add (paired by id). */
  private hooked = new Set<string>();
  private unseen = new UnseenCalls();

  /**
   * `editorStorage`: the editor window's storage folder (`workspaceStorage/<id>`), and
   * `editorGlobalStorage` the editor's global storage folder (`User/globalStorage`), when it runs
   * inside the editor.
   */
  constructor(
    readonly ws: Workspace,
    readonly config: GuardianConfig,
    env: NodeJS.ProcessEnv = process.env,
    editorStorage?: string,
    editorGlobalStorage?: string,
    /** `lastly`: keep each finding as it stood last (`scan`); the editor follows the active findings instead. */
    { lastly = false }: { lastly?: boolean } = {},
  ) {
    if (lastly) this.latest = new LatestFindings(KEEP_FINDINGS);
    // What progress a session made (`progress`) ends the editor's incidents: the engine keeps it.
    this.engine = this.newEngine();
    this.discovery = new AgentDiscovery(ws.root, config, env, editorStorage, editorGlobalStorage);
    const matchers = config.sources.events.map((g) => picomatch(g, { dot: true }));
    this.isEventLog = (rel) => matchers.some((m) => m(rel));
  }

  /** The logs read: the event logs found, and the invocation history where there is one. */
  get files(): string[] {
    return [...this.readers.keys(), ...(this.historyPresent ? [this.config.sources.invocationHistory] : [])];
  }

  get skippedCount(): number {
    return this.skippedTotal;
  }

  /**
   * The logs that hold lines yet gave not one event (every line skipped), with what they were read
   * as: never a silent success. A blank log is not among them.
   */
  unreadLogs(): { file: string; skipped: number; readAs: string }[] {
    const out: { file: string; skipped: number; readAs: string }[] = [];
    for (const [file, n] of this.perLog) {
      if (n.events > 0 || n.skipped === 0) continue;
      const source = this.sources.get(file);
      out.push({ file, skipped: n.skipped, readAs: formatDescription(source ? source.transcript.agent.id : 'events') });
    }
    return out;
  }

  /** The most recent skipped lines (at most 200). */
  get skipped(): readonly SkippedLine[] {
    return this.recentSkipped;
  }

  /** The engine over the logs; what progress a session made (`progress`) ends the editor's incidents, so it keeps it. */
  private newEngine(): Engine {
    const latest = this.latest;
    return new Engine(this.config, { trackNews: true, ...(latest ? { onEpisodeEnd: (f: Finding, raised: Finding) => latest.note(f, raised) } : {}) });
  }

  /** Findings raised so far, oldest first (the most recent 1000), each as it was raised. */
  get raised(): readonly Finding[] {
    return this.recentFindings;
  }

  /** The same, each as it stood last (its count, evidence and words then), for a monitor made with `lastly`. */
  get lastly(): readonly Finding[] {
    const latest = this.latest;
    if (latest === undefined) return this.recentFindings;
    this.engine.noteActive((f, raised) => latest.note(f, raised));
    return this.recentFindings.map((f) => latest.latest(f));
  }

  get stats() {
    return this.engine.stats;
  }

  /** Findings whose pattern is still going on. */
  active(): Finding[] {
    return [...this.historyFindings, ...this.engine.active()];
  }

  /** Who a session is and when it started, as far as its events tell (the latest 1000 sessions). */
  session(id: string): SessionInfo | undefined {
    return this.sessions.get(id);
  }

  private noteSession(e: LocatedEvent): void {
    const id = e.event.session ?? e.ref.file;
    let info = this.sessions.get(id);
    if (!info) {
      info = {};
      this.sessions.set(id, info);
      if (this.sessions.size > MAX_SESSION_INFO) this.sessions.delete(this.sessions.keys().next().value as string);
    }
    if (info.agent === undefined && e.event.agent !== undefined) info.agent = e.event.agent;
    if (e.event.ts !== undefined) {
      info.firstTs ??= e.event.ts;
      info.lastTs = e.event.ts;
      if (e.event.type === 'tool') info.lastCallTs = e.event.ts;
    }
  }

  /** Where a session last made progress (its latest call that succeeded in a new way), if it did. */
  progress(session: string): EventRef | undefined {
    return progressOf(this.engine, session);
  }

  /** The agents' transcripts being read (opted in under `agents` in the configuration). */
  agentSources(): AgentSource[] {
    return [...this.sources.entries()].map(([file, s]) => ({
      file,
      agent: s.transcript.agent.id,
      label: s.transcript.agent.label,
      sessions: [...s.sessions],
      events: s.events,
      ...(s.lastTs !== undefined ? { lastTs: s.lastTs } : {}),
      hooked: s.transcript.session !== undefined && this.hooked.has(`${s.transcript.agent.id}:${s.transcript.session}`),
    }));
  }

  /** Whether a workspace-relative path is one of the logs this monitor reads. */
  watches(rel: string): boolean {
    return rel === this.config.sources.invocationHistory || this.isEventLog(rel);
  }

  /**
   * Finds the logs and reads whatever is new in all of them. The invocation history is re-checked
   * whole unless `history` is false (a caller that knows it has not changed). `onRead` is told after
   * each log is read, and as soon as a finding is raised while one is read: what was found so far
   * (`active()`) can be shown before a long first read ends, and a loop in a long log before the
   * log's end.
   */
  async poll({ history = true, onRead }: { history?: boolean; onRead?: () => void } = {}): Promise<MonitorUpdate> {
    const fileSkips: SkippedLine[] = [];
    const files = await discoverFiles(this.ws, this.config.sources.events, (s) => this.noteFileProblem(s, fileSkips));
    for (const rel of files) if (rel !== this.config.sources.invocationHistory && !this.readers.has(rel)) this.readers.set(rel, new EventLogReader(this.ws.path(rel), rel));
    if (this.discovery.enabled) await this.discoverTranscripts(files);
    return this.read([...this.readers.keys()], history, fileSkips, onRead);
  }

  /** A file or glob not read: reported the first time, and again only if the reason changes. */
  private noteFileProblem(skip: SkippedLine, into: SkippedLine[]): void {
    const key = `${skip.file}|${skip.field}`;
    if (this.fileProblems.get(key) === skip.reason) return;
    this.fileProblems.set(key, skip.reason);
    into.push(skip);
  }

  /**
   * Adds the agents' transcripts not read yet. A session the guardian's hook already records
   * (`hook-<agent>-<session>.jsonl`) is not read from its transcript too: it would count twice;
   * except, for an agent that rejects some calls before its hook, for the calls its hook never saw.
   */
  private async discoverTranscripts(files: readonly string[]): Promise<void> {
    const hooked = new Set<string>();
    for (const rel of files) {
      const key = hookLogKey(rel);
      if (key !== undefined) hooked.add(key);
    }
    this.hooked = hooked;
    for (const t of await this.discovery.discover(this.readers)) {
      if (t.session !== undefined && hooked.has(`${t.agent.id}:${t.session}`) && !UNSEEN_IN_TRANSCRIPT.has(t.agent.id)) continue;
      this.readers.set(t.file, transcriptReader(t));
      this.sources.set(t.file, { transcript: t, sessions: new Set(), events: 0 });
    }
  }

  private newReader(key: string): Reader {
    const source = this.sources.get(key);
    return source ? transcriptReader(source.transcript) : new EventLogReader(this.ws.path(key), key);
  }

  /** Reads what is new in the given files only (from a file watcher). */
  async pollFiles(rels: readonly string[]): Promise<MonitorUpdate> {
    const logs: string[] = [];
    const fileSkips: SkippedLine[] = [];
    let history = false;
    for (const rel of rels) {
      if (rel === this.config.sources.invocationHistory) history = true;
      else if (this.isEventLog(rel)) {
        if (!this.readers.has(rel)) {
          if (!(await resolvesInside(this.ws, rel))) {
            this.noteFileProblem({ file: rel, line: 1, field: '(file)', reason: 'resolves outside the workspace (through a link); skipped' }, fileSkips);
            continue;
          }
          this.readers.set(rel, new EventLogReader(this.ws.path(rel), rel));
          const key = hookLogKey(rel);
          if (key !== undefined) this.hooked.add(key);
        }
        logs.push(rel);
      }
    }
    return this.read(logs, history, fileSkips);
  }

  /** `fileSkips`: files and globs not read, reported before the lines skipped. */
  private async read(logs: readonly string[], history: boolean, fileSkips: SkippedLine[], onRead?: () => void): Promise<MonitorUpdate> {
    const raised: Finding[] = [];
    const skipped: SkippedLine[] = [];
    const sink: EventSink = {
      event: (e) => {
        this.noteSession(e);
        const found = this.engine.push(e);
        if (found.length === 0) return;
        for (const f of found) raised.push(f);
        onRead?.();
      },
      skipped: (s: SkippedLine) => skipped.push(s),
    };
    for (const rel of logs) {
      if (await this.readLog(rel, sink, fileSkips)) onRead?.();
    }
    // Settled transcript calls of hooked sessions: their hook logs read again first, so that a call
    // the hook recorded just now is not taken from the transcript too.
    const waiting = this.unseen.waiting;
    if (waiting.size > 0) {
      for (const rel of [...this.readers.keys()]) {
        const key = hookLogKey(rel);
        if (key !== undefined && waiting.has(key)) await this.readLog(rel, sink, fileSkips);
      }
      this.unseen.flush();
    }
    if (this.needsRebuild) return this.rebuild(fileSkips, onRead);
    if (history) appendAll(raised, await this.checkHistory(skipped));
    // Files that could not be read come first; concat, not a spread: either list can be long.
    const allSkipped = fileSkips.concat(skipped);
    this.remember(raised);
    this.noteSkipped(allSkipped);
    return { raised, skipped: allSkipped };
  }

  /** Reads what is new in one log into `sink`; false when it could not be read, or everything must be read again. */
  private async readLog(rel: string, sink: EventSink, fileSkips: SkippedLine[]): Promise<boolean> {
    const reader = this.readers.get(rel);
    if (!reader) return false;
    const source = this.sources.get(rel);
    let result;
    const counts = this.perLog.get(rel) ?? { events: 0, skipped: 0 };
    this.perLog.set(rel, counts);
    const logSink: EventSink = {
      event: (e) => {
        counts.events++;
        sink.event(e);
      },
      skipped: (sk) => {
        counts.skipped++;
        sink.skipped(sk);
      },
    };
    try {
      result = await reader.read(this.pairing(rel, source, source ? this.counting(source, logSink) : logSink));
      this.fileProblems.delete(`${rel}|(file)`);
    } catch (err) {
      // One log that cannot be read (a FIFO, a folder, EACCES, a link loop) is reported and
      // skipped: the others are read all the same.
      this.noteFileProblem({ file: rel, line: 1, field: '(file)', reason: unreadableReason(err) }, fileSkips);
      return false;
    }
    if (result.reset) this.needsRebuild = true;
    if (result.missing) {
      this.readers.delete(rel);
      this.sources.delete(rel);
      this.perLog.delete(rel);
    }
    return !this.needsRebuild;
  }

  /** A hook log's and a transcript's events, paired by call id where the agent's transcript adds calls its hook never saw. */
  private pairing(rel: string, source: SourceInfo | undefined, sink: EventSink): EventSink {
    const hookKey = hookLogKey(rel);
    if (source === undefined && hookKey !== undefined) return { event: (e) => this.unseen.hookEvent(hookKey, e, sink), skipped: sink.skipped };
    const agent = source?.transcript.agent.id;
    if (agent === undefined || !UNSEEN_IN_TRANSCRIPT.has(agent)) return sink;
    return {
      event: (e) => {
        const key = `${agent}:${e.event.session ?? ''}`;
        this.unseen.transcriptEvent(key, this.hooked.has(key), e, sink);
      },
      skipped: sink.skipped,
    };
  }

  /** A log was replaced or truncated: what was counted from it no longer holds, so count again. */
  private async rebuild(fileSkips: SkippedLine[], onRead?: () => void): Promise<MonitorUpdate> {
    this.needsRebuild = false;
    this.engine = this.newEngine();
    this.unseen = new UnseenCalls();
    this.latest?.clear();
    const files = [...this.readers.keys()];
    this.readers = new Map(files.map((rel) => [rel, this.newReader(rel)]));
    this.perLog.clear();
    for (const s of this.sources.values()) {
      s.events = 0;
      s.sessions.clear();
    }
    this.recentFindings.length = 0;
    return this.read(files, true, fileSkips, onRead);
  }

  private async checkHistory(skipped: SkippedLine[]): Promise<Finding[]> {
    const rel = this.config.sources.invocationHistory;
    // The history is a log too: a FIFO there must not block the read.
    let present = true;
    const regular = checkRegularFile(this.ws.path(rel), rel).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
      present = false;
    });
    const read = await regular.then(() => readInvocationHistory(this.ws, rel)).catch((err: Error) => {
      skipped.push({ file: rel, line: 1, field: '(file)', reason: `cannot read (${err.message}); treated as an empty history` });
      return undefined;
    });
    this.historyPresent = present;
    if (!read) return [];
    appendAll(skipped, read.skipped);
    const engine = new Engine(this.config);
    const raised: Finding[] = [];
    for (const e of historyEvents(read, rel)) appendAll(raised, engine.push(e));
    this.historyFindings = engine.active();
    // The history is checked whole each time: only what was never raised before is new.
    const fresh = raised.filter((f) => !this.historySeen.has(`${f.episode}|${f.action}`));
    if (this.historySeen.size > 10_000) this.historySeen.clear();
    for (const f of raised) this.historySeen.add(`${f.episode}|${f.action}`);
    return fresh;
  }

  /** A sink that also keeps a transcript's numbers for the sidebar. */
  private counting(source: SourceInfo, sink: EventSink): EventSink {
    return {
      event: (e) => {
        source.events++;
        if (e.event.session !== undefined && source.sessions.size < 100) source.sessions.add(e.event.session);
        if (e.event.ts !== undefined) source.lastTs = e.event.ts;
        sink.event(e);
      },
      skipped: sink.skipped,
    };
  }

  private remember(raised: readonly Finding[]): void {
    appendAll(this.recentFindings, raised);
    if (this.recentFindings.length > KEEP_FINDINGS) this.recentFindings.splice(0, this.recentFindings.length - KEEP_FINDINGS);
  }

  private noteSkipped(skipped: readonly SkippedLine[]): void {
    this.skippedTotal += skipped.length;
    appendAll(this.recentSkipped, skipped);
    if (this.recentSkipped.length > KEEP_SKIPPED) this.recentSkipped.splice(0, this.recentSkipped.length - KEEP_SKIPPED);
  }
}

/**
 * `into.push(...items)` without the spread: a spread passes every item as an argument on the
 * stack, and a scan raising a few hundred thousand findings overflowed it.
 */
function appendAll<T>(into: T[], items: Iterable<T>): void {
  for (const item of items) into.push(item);
}
