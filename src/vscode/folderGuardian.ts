import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { BlockedTask } from '../core/blockedSummary';
import type { ConfigProblem, GuardianConfig } from '../core/config';
import type { Finding } from '../core/finding';
import { BlockedTaskRegistry } from '../state/blockedTaskRegistry';
import { formatProblem, loadConfig } from '../state/configFile';
import { formatSkipped } from '../core/events';
import { StopAllFile, type StopAllRead } from '../state/stopAllFile';
import { isWithin, PATHS, Workspace } from '../state/workspace';
import { agentEnforcement, type AgentEnforcement } from '../watch/enforcement';
import { WorkspaceMonitor, type AgentSource } from '../watch/workspaceMonitor';
import { agentOfEvents } from '../agents';
import { HOOKED_AGENTS } from '../agents/hooks';
import { HEARTBEATS } from '../state/heartbeat';
import { outcomeOf, readHookOutcomes, type HookOutcome } from '../state/hookOutcomes';
import { IncidentBook, type IncidentChanges, type TrackedIncident } from '../core/incidentBook';
import { DisposableStore } from './disposables';
import type { UiSettings } from './uiSettings';

/** What one workspace folder's guardian knows now. */
export interface FolderState {
  /** The findings still going on (each incident's reasons). */
  readonly findings: readonly Finding[];
  /** The loops going on now, most severe first: what the status bar counts and the views show. */
  readonly incidents: readonly TrackedIncident[];
  /** Incidents over (resolved by progress, idle, dismissed) in this editor session, the latest first. */
  readonly closedIncidents: readonly TrackedIncident[];
  readonly stop: StopAllRead;
  readonly blocked: readonly BlockedTask[];
  readonly problems: readonly string[];
  readonly skipped: number;
  readonly files: readonly string[];
  readonly events: number;
  /** The agents' own transcripts being read (opted in under `agents`). */
  readonly agents: readonly AgentSource[];
  /** The agents that have worked in this folder (their transcripts, their hook settings), watched or not, with how well each is protected. */
  readonly foundAgents: readonly AgentEnforcement[];
  /** What the hooks did, per `<agent>:<session>` (the guardian log's refusals). */
  readonly outcomes: ReadonlyMap<string, HookOutcome>;
}

/**
 * The files whose change may change how well an agent is protected: each agent's hook settings
 * (a hook added or removed), the hooks' heartbeat (a hooked call). Relative to the folder.
 */
const PROTECTION_FILES: readonly string[] = [
  ...new Set([
    ...HOOKED_AGENTS.flatMap(({ hook: { registration: reg } }) => [
      ...(reg.layout === 'script' ? [`${reg.settingsFile}/**`] : [reg.settingsFile, ...(reg.migrateFrom ?? [])]),
      ...(reg.alsoReads !== undefined ? [reg.alsoReads] : []),
    ]),
    HEARTBEATS,
  ]),
];

/** How often the safety net looks for what the file watcher may have missed. */
const SAFETY_MS = 2000;
/** Reading waits for writes to pause, but never longer than this. */
const MAX_WAIT_MS = 500;
/** While a long first read goes on, what it found so far is shown this often. */
const PROGRESS_MS = 250;
// Markers for the guardian's own files among the dirty log paths (no log path starts with ':').
const STOP = ':stop';
const REGISTRY = ':registry';
const CONFIG = ':config';
/** An agent's hook settings, the heartbeat or a transcript changed: how well each agent is protected is looked at again. */
const AGENTS = ':agents';
/** The guardian log changed: what the hooks did is read again. */
const HOOKS = ':hooks';
/** A transcript outside the folder changed. */
const TRANSCRIPTS = ':transcripts';
const EMPTY_STOP: StopAllRead = { state: { status: 'CLEAR' }, parse: { ok: true, state: { status: 'CLEAR' }, warnings: [] }, exists: false };

/**
 * One workspace folder: its configuration, a monitor of its logs fed by file watchers (debounced,
 * reading only appended bytes), its STOP_ALL file and its blocked-task registry.
 */
export class FolderGuardian implements vscode.Disposable {
  readonly ws: Workspace;
  private monitor: WorkspaceMonitor | undefined;
  private config: GuardianConfig | undefined;
  private configProblems: readonly ConfigProblem[] = [];
  private stop: StopAllRead = EMPTY_STOP;
  private blocked: readonly BlockedTask[] = [];
  private registryProblems: readonly string[] = [];
  private watchers = new DisposableStore();
  private readonly dirty = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private safety: NodeJS.Timeout | undefined;
  private signatures = new Map<string, string>();
  private firstDirty = 0;
  private queue: Promise<void> = Promise.resolve();
  private disposed = false;
  private readonly changed = new vscode.EventEmitter<void>();
  private readonly incidentsEmitter = new vscode.EventEmitter<IncidentChanges>();
  private book: IncidentBook;
  private found: readonly AgentEnforcement[] = [];
  private outcomes: ReadonlyMap<string, HookOutcome> = new Map();
  /** Watchers on the folders of the agents' transcripts outside the workspace (by folder). */
  private transcriptWatchers = new Map<string, vscode.Disposable>();
  /** A read of every log from the start is under way (its findings are partial until it ends). */
  private reading = false;
  /** The publish under way is the end of a read of every log from the start. */
  private wholeRead = false;
  /** The state changed (findings, incidents, STOP_ALL, blocked tasks). */
  readonly onDidChange = this.changed.event;
  /** Incidents opened, grown or closed by what was just read (or by time, or by a person). */
  readonly onDidChangeIncidents = this.incidentsEmitter.event;

  constructor(
    readonly folder: vscode.WorkspaceFolder,
    private readonly settings: () => UiSettings,
    private readonly log: vscode.LogOutputChannel,
    private readonly editorStorage?: string,
    private readonly editorGlobalStorage?: string,
  ) {
    this.ws = new Workspace(folder.uri.fsPath);
    this.book = new IncidentBook({ idleMs: settings().idleMinutes * 60_000 });
  }

  /** How a session is named to a person: its agent and when it started, as far as its events tell. */
  sessionLabel(session: string, agentLabel?: string): string {
    const info = this.monitor?.session(session);
    const agent = this.snapshot.agents.find((a) => a.sessions.includes(session))?.label ?? (info?.agent !== undefined ? (agentOfEvents(info.agent)?.label ?? info.agent) : agentLabel);
    const started = info?.firstTs ? shortTime(info.firstTs) : undefined;
    return [agent, started ? `started ${started}` : undefined, shortId(session)].filter(Boolean).join(' · ');
  }

  /** The agent a session is of, with how well it is protected here, when the folder's agents tell. */
  agentOfSession(session: string): AgentEnforcement | undefined {
    const info = this.monitor?.session(session);
    const id = this.snapshot.agents.find((a) => a.sessions.includes(session))?.agent ?? (info?.agent !== undefined ? agentOfEvents(info.agent)?.id : undefined);
    return id === undefined ? undefined : this.found.find((a) => a.id === id);
  }

  /**
   * What the hook did about an incident's loop, when it handled it: it refused a call of the
   * session, and no call ran after its latest refusal (a refused call is logged before the
   * refusal is; a call that ran after it is newer). Undefined for a loop still going.
   */
  handledBy(incident: TrackedIncident): HookOutcome | undefined {
    const o = outcomeOf(this.outcomes, incident.session);
    if (o === undefined || o.refused === 0) return undefined;
    const lastCall = this.monitor?.session(incident.session)?.lastCallTs;
    if (lastCall !== undefined && Date.parse(lastCall) > Date.parse(o.lastTs)) return undefined;
    return o;
  }

  /** What the hook did in an incident's session, handled or not (refusals, with calls after them). */
  outcomeOf(incident: TrackedIncident): HookOutcome | undefined {
    return outcomeOf(this.outcomes, incident.session);
  }

  /** True while the incidents of a read of every log from the start are published: they were found, not seen happen. */
  get readingWhole(): boolean {
    return this.wholeRead;
  }

  /** An incident of this folder by its id, open or over, as of the last change. */
  incident(id: string): TrackedIncident | undefined {
    return this.snapshot.incidents.find((i) => i.id === id) ?? this.snapshot.closedIncidents.find((i) => i.id === id);
  }

  /** A person has seen it: it moves under the closed incidents until it becomes more severe. */
  dismiss(id: string): boolean {
    const closed = this.book.dismiss(id, Date.now());
    if (closed) this.publishIncidents({ opened: [], changed: [], closed: [closed] });
    return closed !== undefined;
  }

  dismissAll(): number {
    const closed = this.book.dismissAll(Date.now());
    if (closed.length > 0) this.publishIncidents({ opened: [], changed: [], closed });
    return closed.length;
  }

  /** Ends the incidents idle past the setting (the safety net calls it). */
  private tick(): void {
    const changes = this.book.tick(Date.now());
    if (changes.closed.length > 0) this.publishIncidents(changes);
  }

  private publishIncidents(changes: IncidentChanges): void {
    for (const i of changes.closed) this.log.info(`${this.folder.name}: loop over (${i.end}): ${i.lead.subject}`);
    this.snapshot = this.derive();
    this.incidentsEmitter.fire(changes);
    this.changed.fire();
  }

  get guardianConfig(): GuardianConfig | undefined {
    return this.config;
  }

  /** The state as of the last change event: derived once per change, the same for every reader. */
  get state(): FolderState {
    return this.snapshot;
  }

  private snapshot: FolderState = this.derive();

  /** Takes the snapshot, follows the incidents, and tells the listeners (status bar, views, diagnostics, notifier). */
  private publish(): void {
    const findings = this.monitor?.active() ?? [];
    const monitor = this.monitor;
    if (this.reading) {
      // A read from the start is under way: its findings so far are partial. Show them, but only
      // the whole read decides which loops opened, grew or ended (nor are notifications shown yet).
      this.snapshot = this.derive(findings, this.book.preview(findings, Date.now()));
      this.changed.fire();
      return;
    }
    const changes = this.book.update(findings, Date.now(), monitor ? (session) => monitor.progress(session) : undefined);
    for (const i of changes.opened) this.log.info(`${this.folder.name}: loop ${i.action.toUpperCase()} in ${i.session}: ${i.lead.message}`);
    this.snapshot = this.derive(findings);
    if (changes.opened.length + changes.changed.length + changes.closed.length > 0) this.incidentsEmitter.fire(changes);
    this.changed.fire();
  }

  private derive(findings: readonly Finding[] = this.snapshot?.findings ?? [], incidents: readonly TrackedIncident[] = this.book?.open ?? []): FolderState {
    return {
      findings,
      incidents,
      closedIncidents: this.book?.closed ?? [],
      stop: this.stop,
      blocked: this.blocked,
      problems: [
        ...this.configProblems.map((p) => formatProblem(PATHS.config, p)),
        ...(this.stop.parse.ok ? [] : [`${PATHS.stopAll}: ${this.stop.parse.error}; read as CLEAR`]),
        ...this.registryProblems,
      ],
      skipped: this.monitor?.skippedCount ?? 0,
      files: this.monitor?.files ?? [],
      events: this.monitor?.stats.events ?? 0,
      agents: this.monitor?.agentSources() ?? [],
      foundAgents: this.found,
      outcomes: this.outcomes,
    };
  }

  /** Reads the configuration, starts watching, and reads every log from the start. */
  start(): Promise<void> {
    // File watchers miss files in folders created in one go (mkdir -p, then write): the
    // safety net finds new logs and changed guardian files within SAFETY_MS anyway.
    this.safety = setInterval(() => {
      void this.serialize(() => this.sweep());
      this.tick();
    }, SAFETY_MS);
    return this.serialize(() => this.reload());
  }

  /** Reads everything again from the start (Scan Now). */
  rescan(): Promise<void> {
    return this.serialize(() => this.reload());
  }

  /** Reads STOP_ALL and the blocked-task registry again (after this window wrote them). */
  refreshState(): Promise<void> {
    return this.serialize(async () => {
      await Promise.all([this.readStop(), this.readRegistry()]);
      this.publish();
    });
  }

  /** Resolves when every read asked for so far is done. */
  idle(): Promise<void> {
    return this.queue;
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.safety) clearInterval(this.safety);
    this.watchers.dispose();
    for (const w of this.transcriptWatchers.values()) w.dispose();
    this.changed.dispose();
    this.incidentsEmitter.dispose();
  }

  private async reload(): Promise<void> {
    // The guardian's own files are signed before they are read: one changed while they are read
    // (a watcher's event lost) is then found by the next sweep, never taken as already read.
    const signatures = new Map([[PATHS.config, await signature(this.ws.path(PATHS.config))]]);
    const loaded = await loadConfig(this.ws);
    this.config = loaded.config;
    this.configProblems = loaded.problems;
    await this.ownSignatures(signatures);
    for (const p of loaded.problems) this.log.warn(`${this.folder.name}: ${formatProblem(PATHS.config, p)}`);
    this.monitor = new WorkspaceMonitor(this.ws, loaded.config, process.env, this.editorStorage, this.editorGlobalStorage);
    // Read again from the start (Scan Now, a new config): the same loops keep their ids, so a
    // dismissed one stays dismissed; the idle time follows the setting.
    if (this.book.idleMs !== this.settings().idleMinutes * 60_000) this.book = new IncidentBook({ idleMs: this.settings().idleMinutes * 60_000 });
    // Watch before the first read: a log created meanwhile is then read by the watcher's poll.
    this.watch();
    // A folder with hundreds of MB of transcripts takes a while: the status bar and the views show
    // what was found so far as each log is read, and a loop as soon as it is found (notifications
    // wait for the end).
    const monitor = this.monitor;
    let shown = Date.now();
    this.reading = true;
    let update;
    try {
      update = await monitor.poll({
        onRead: () => {
          // The first finding at once, then at most every PROGRESS_MS.
          const first = this.snapshot.findings.length === 0 && monitor.active().length > 0;
          if (!first && Date.now() - shown < PROGRESS_MS) return;
          shown = Date.now();
          this.publish();
        },
      });
    } finally {
      this.reading = false;
    }
    await Promise.all([this.readStop(), this.readRegistry(), this.readOutcomes()]);
    this.wholeRead = true;
    try {
      this.report(update.skipped.map(formatSkipped), update.raised);
    } finally {
      this.wholeRead = false;
    }
    this.signatures = signatures;
    // Which agents have worked here is looked for after the first read, never in its way.
    void this.lookForAgents(loaded.config);
  }

  /** Looks again which agents have worked in this folder (after a hook is installed, for one). */
  async lookForAgents(config: GuardianConfig | undefined = this.config, publish = true): Promise<void> {
    if (!config) return;
    try {
      this.found = await agentEnforcement(this.ws, config, process.env, this.editorStorage);
    } catch (err) {
      this.log.warn(`${this.folder.name}: looking for agents: ${(err as Error).message}`);
      return;
    }
    if (!this.disposed) {
      this.watchTranscripts();
      if (publish) this.publish();
    }
  }

  private async readOutcomes(): Promise<void> {
    this.outcomes = await readHookOutcomes(this.ws);
  }

  /**
   * The agents' transcripts live outside the folder (each agent keeps them in the user's home), out of
   * the folder's watchers' sight: one watcher per folder holding a transcript read or found, so that a
   * call an agent makes is seen at once (its loop, and whether its hook saw it).
   */
  private watchTranscripts(): void {
    const dirs = new Set<string>();
    for (const a of this.monitor?.agentSources() ?? []) dirs.add(path.dirname(a.file));
    for (const f of this.found) for (const t of f.recent ?? []) dirs.add(path.dirname(t.file));
    for (const [dir, w] of this.transcriptWatchers) {
      if (!dirs.has(dir)) {
        w.dispose();
        this.transcriptWatchers.delete(dir);
      }
    }
    for (const dir of dirs) {
      if (this.transcriptWatchers.has(dir) || isWithin(this.ws.root, dir)) continue;
      const store = new DisposableStore();
      const w = store.add(vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.file(dir), '*.jsonl')));
      const changed = () => this.schedule(TRANSCRIPTS);
      store.add(w.onDidCreate(changed));
      store.add(w.onDidChange(changed));
      store.add(w.onDidDelete(changed));
      this.transcriptWatchers.set(dir, store);
    }
  }

  private watch(): void {
    const store = new DisposableStore();
    const on = (glob: string, handler: (uri: vscode.Uri) => void) => {
      const w = store.add(vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(this.folder, glob)));
      store.add(w.onDidCreate(handler));
      store.add(w.onDidChange(handler));
      store.add(w.onDidDelete(handler));
    };
    const config = this.config;
    if (!config) return;
    const logChanged = (uri: vscode.Uri) => this.schedule(this.ws.relative(uri.fsPath));
    for (const glob of config.sources.events) on(glob, logChanged);
    // One glob for single files: a plain path gets a watcher on the file itself, which loses it
    // when the file is replaced by an atomic rename (as the guardian and agents write them).
    const own = this.ownFiles();
    on(`{${[...own.keys()].join(',')}}`, (uri) => {
      const what = own.get(this.ws.relative(uri.fsPath));
      if (what !== undefined) this.schedule(what);
    });
    // How well each agent is protected changes with its hook settings and the heartbeat (issue 33).
    on(`{${PROTECTION_FILES.join(',')}}`, () => this.schedule(AGENTS));
    // The new watchers are in place before the old ones go: a reload never leaves the folder unwatched.
    this.watchers.dispose();
    this.watchers = store;
  }

  /**
   * Debounced: another tool's write often comes as several events (truncate, then write), and an
   * agent writes several lines at once; one read after the last event sees the finished file.
   */
  private schedule(what: string): void {
    this.dirty.add(what);
    const now = Date.now();
    if (this.timer) {
      // A steady stream of writes must not put reading off for ever.
      if (now - this.firstDirty >= MAX_WAIT_MS) return;
      clearTimeout(this.timer);
    } else {
      this.firstDirty = now;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const dirty = new Set(this.dirty);
      this.dirty.clear();
      void this.serialize(async () => {
        if (dirty.has(CONFIG)) {
          this.log.info(`${this.folder.name}: ${PATHS.config} changed; reading every log again`);
          return this.reload();
        }
        const stop = dirty.delete(STOP) && (await this.readStop());
        const registry = dirty.delete(REGISTRY);
        if (registry) await this.readRegistry();
        const agents = dirty.delete(AGENTS);
        const transcripts = dirty.delete(TRANSCRIPTS);
        // A refusal is logged right after the refused call: read with the hook log that holds the call.
        const hooks = dirty.delete(HOOKS) || [...dirty].some((d) => /(?:^|\/)hook-[^/]*\.jsonl$/.test(d));
        if (hooks) await this.readOutcomes();
        // Looked at before the logs are judged: a loop read under STOP is told by whom STOP reaches now.
        if (agents || transcripts) await this.lookForAgents(this.config, false);
        const update = this.monitor && dirty.size > 0 ? await this.monitor.pollFiles([...dirty]) : transcripts && this.monitor ? await this.monitor.poll({ history: false }) : undefined;
        if (update) this.report(update.skipped.map(formatSkipped), update.raised);
        else if (stop || registry || agents || transcripts || hooks) this.publish();
      });
    }, this.settings().debounceMs);
  }

  private report(skipped: readonly string[], raised: readonly Finding[]): void {
    for (const s of skipped) this.log.warn(`${this.folder.name}: skipped ${s}`);
    for (const f of raised) this.log.info(`${this.folder.name}: ${f.action.toUpperCase()} ${f.signal} at ${f.at.file}:${f.at.line}: ${f.message}`);
    this.publish();
  }

  /** The guardian's own files by what they are, as `schedule` names them. */
  private ownFiles(): Map<string, string> {
    const config = this.config;
    return new Map<string, string>([
      ...(config ? [[config.sources.invocationHistory, config.sources.invocationHistory] as [string, string]] : []),
      [PATHS.stopAll, STOP],
      [PATHS.registry, REGISTRY],
      [PATHS.config, CONFIG],
      [PATHS.guardianLog, HOOKS],
    ]);
  }

  /** The signatures of the guardian's own files, added to `into` (those it has already are kept). */
  private async ownSignatures(into = new Map<string, string>()): Promise<Map<string, string>> {
    for (const rel of this.ownFiles().keys()) if (!into.has(rel)) into.set(rel, await signature(this.ws.path(rel)));
    return into;
  }

  /** The safety net: whatever changed unseen is scheduled as if a watcher had reported it. */
  private async sweep(): Promise<void> {
    if (!this.monitor) return;
    const now = await this.ownSignatures();
    const own = this.ownFiles();
    for (const [rel, sig] of now) if (this.signatures.get(rel) !== sig) this.schedule(own.get(rel) as string);
    this.signatures = now;
    // The history is re-checked only when its signature changed (scheduled above).
    const events = this.monitor.stats.events;
    const sources = this.monitor.agentSources().length;
    const update = await this.monitor.poll({ history: false });
    if (update.raised.length > 0 || update.skipped.length > 0) this.report(update.skipped.map(formatSkipped), update.raised);
    // Agents' transcripts live outside the folder, where no watcher sees them: a session found, or
    // one that went on without a loop, is shown all the same.
    else if (this.monitor.stats.events !== events || this.monitor.agentSources().length !== sources) this.publish();
  }

  /** True when the state changed. */
  private async readStop(): Promise<boolean> {
    const before = JSON.stringify(this.stop.state);
    this.stop = await new StopAllFile(this.ws).read();
    if (!this.stop.parse.ok) this.log.warn(`${this.folder.name}: ${PATHS.stopAll}: ${this.stop.parse.error}; read as CLEAR`);
    return JSON.stringify(this.stop.state) !== before;
  }

  private async readRegistry(): Promise<void> {
    const read = await new BlockedTaskRegistry(this.ws).list();
    this.blocked = read.tasks;
    this.registryProblems = read.problems;
  }

  /** Runs reads one after another; an error is logged, never thrown into the watcher. */
  private serialize(work: () => Promise<unknown>): Promise<void> {
    this.queue = this.queue.then(async () => {
      if (this.disposed) return;
      try {
        await work();
      } catch (err) {
        this.log.error(`${this.folder.name}: ${(err as Error).stack ?? String(err)}`);
      }
    });
    return this.queue;
  }
}

/** What tells a file changed: its inode, size and time of change ('' when it is not there). */
async function signature(file: string): Promise<string> {
  const st = await fs.stat(file).catch(() => undefined);
  return st ? `${st.ino}:${st.size}:${st.mtimeMs}` : '';
}

function shortTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const today = new Date();
  const time = d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  return d.toDateString() === today.toDateString() ? time : `${d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })} ${time}`;
}

function shortId(id: string): string {
  const base = id.includes('/') ? id.slice(id.lastIndexOf('/') + 1) : id;
  return base.length > 13 ? `${base.slice(0, 8)}…` : base;
}
