import * as vscode from 'vscode';
import type { BlockedTask } from '../core/blockedSummary';
import type { ConfigProblem, GuardianConfig } from '../core/config';
import type { Finding } from '../core/finding';
import { BlockedTaskRegistry } from '../store/blockedTaskRegistry';
import { formatProblem, loadConfig } from '../store/configFile';
import { formatSkipped } from '../store/eventLog';
import { StopAllFile, type StopAllRead } from '../store/stopAllFile';
import { PATHS, Workspace } from '../store/workspace';
import { WorkspaceMonitor } from '../store/workspaceMonitor';
import { DisposableStore } from './disposables';

/** What one workspace folder's guardian knows now. */
export interface FolderState {
  readonly findings: readonly Finding[];
  readonly stop: StopAllRead;
  readonly blocked: readonly BlockedTask[];
  readonly problems: readonly string[];
  readonly skipped: number;
  readonly files: readonly string[];
  readonly events: number;
}

const SETTLE_MS = 1000;
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
  private settle: NodeJS.Timeout | undefined;
  private queue: Promise<void> = Promise.resolve();
  private disposed = false;
  private readonly changed = new vscode.EventEmitter<void>();
  private readonly raisedEmitter = new vscode.EventEmitter<readonly Finding[]>();
  /** The state changed (findings, STOP_ALL, blocked tasks). */
  readonly onDidChange = this.changed.event;
  /** Findings raised by what was just read. */
  readonly onDidRaise = this.raisedEmitter.event;

  constructor(
    readonly folder: vscode.WorkspaceFolder,
    private readonly debounceMs: () => number,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.ws = new Workspace(folder.uri.fsPath);
  }

  get guardianConfig(): GuardianConfig | undefined {
    return this.config;
  }

  get state(): FolderState {
    return {
      findings: this.monitor?.active() ?? [],
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
    };
  }

  /** Reads the configuration, starts watching, and reads every log from the start. */
  start(): Promise<void> {
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
      this.changed.fire();
    });
  }

  /** Resolves when every read asked for so far is done. */
  idle(): Promise<void> {
    return this.queue;
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.settle) clearTimeout(this.settle);
    this.watchers.dispose();
    this.changed.dispose();
    this.raisedEmitter.dispose();
  }

  private async reload(): Promise<void> {
    const loaded = await loadConfig(this.ws);
    this.config = loaded.config;
    this.configProblems = loaded.problems;
    for (const p of loaded.problems) this.log.warn(`${this.folder.name}: ${formatProblem(PATHS.config, p)}`);
    this.monitor = new WorkspaceMonitor(this.ws, loaded.config);
    // Watch before the first read: a log created meanwhile is then read by the watcher's poll.
    this.watch();
    const update = await this.monitor.poll();
    await Promise.all([this.readStop(), this.readRegistry()]);
    this.report(update.skipped.map(formatSkipped), update.raised);
    // A file watcher takes a moment to be in place: one more look catches logs created meanwhile.
    if (this.settle) clearTimeout(this.settle);
    this.settle = setTimeout(() => {
      this.settle = undefined;
      void this.serialize(async () => {
        const late = await this.monitor?.poll();
        if (late) this.report(late.skipped.map(formatSkipped), late.raised);
      });
    }, SETTLE_MS);
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
    const logChanged = (uri: vscode.Uri) => {
      this.dirty.add(this.ws.relative(uri.fsPath));
      this.schedule();
    };
    for (const glob of config.sources.events) on(glob, logChanged);
    on(config.sources.invocationHistory, logChanged);
    on(PATHS.stopAll, () => void this.serialize(async () => (await this.readStop()) && this.changed.fire()));
    on(PATHS.registry, () => void this.serialize(async () => (await this.readRegistry()) && this.changed.fire()));
    on(PATHS.config, () => void this.serialize(async () => {
      this.log.info(`${this.folder.name}: ${PATHS.config} changed; reading every log again`);
      await this.reload();
    }));
    // The new watchers are in place before the old ones go: a reload never leaves the folder unwatched.
    this.watchers.dispose();
    this.watchers = store;
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const files = [...this.dirty];
      this.dirty.clear();
      void this.serialize(async () => {
        if (!this.monitor) return;
        const update = await this.monitor.pollFiles(files);
        this.report(update.skipped.map(formatSkipped), update.raised);
      });
    }, this.debounceMs());
  }

  private report(skipped: readonly string[], raised: readonly Finding[]): void {
    for (const s of skipped) this.log.warn(`${this.folder.name}: skipped ${s}`);
    for (const f of raised) this.log.info(`${this.folder.name}: ${f.action.toUpperCase()} ${f.signal} at ${f.at.file}:${f.at.line}: ${f.message}`);
    if (raised.length > 0) this.raisedEmitter.fire(raised);
    this.changed.fire();
  }

  /** True when the state changed. */
  private async readStop(): Promise<boolean> {
    const before = JSON.stringify(this.stop.state);
    this.stop = await new StopAllFile(this.ws).read();
    if (!this.stop.parse.ok) this.log.warn(`${this.folder.name}: ${PATHS.stopAll}: ${this.stop.parse.error}; read as CLEAR`);
    return JSON.stringify(this.stop.state) !== before;
  }

  private async readRegistry(): Promise<boolean> {
    const read = await new BlockedTaskRegistry(this.ws).list();
    this.blocked = read.tasks;
    this.registryProblems = read.problems;
    return true;
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
