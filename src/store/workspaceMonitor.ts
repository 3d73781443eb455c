import picomatch from 'picomatch';
import type { GuardianConfig } from '../core/config';
import { Engine } from '../core/engine';
import type { Finding } from '../core/finding';
import { EventLogReader, type SkippedLine } from './eventLog';
import { historyEvents, readInvocationHistory } from './invocationHistory';
import { discoverFiles } from './sourceDiscovery';
import type { Workspace } from './workspace';

const KEEP_SKIPPED = 200;
const KEEP_FINDINGS = 1_000;

export interface MonitorUpdate {
  /** Findings raised since the last update (new episodes, or more severe than before). */
  readonly raised: Finding[];
  /** Lines skipped since the last update. */
  readonly skipped: SkippedLine[];
}

/**
 * Watches one workspace's logs: the JSONL event logs (read incrementally, one engine across them)
 * and seed 000's invocation history (at most 50 entries: re-checked whole when it changes).
 */
export class WorkspaceMonitor {
  private engine: Engine;
  private readers = new Map<string, EventLogReader>();
  private historyFindings: Finding[] = [];
  private readonly historySeen = new Set<string>();
  private readonly isEventLog: (rel: string) => boolean;
  private readonly recentFindings: Finding[] = [];
  private readonly recentSkipped: SkippedLine[] = [];
  private skippedTotal = 0;
  private needsRebuild = false;

  constructor(readonly ws: Workspace, readonly config: GuardianConfig) {
    this.engine = new Engine(config);
    const matchers = config.sources.events.map((g) => picomatch(g, { dot: true }));
    this.isEventLog = (rel) => matchers.some((m) => m(rel));
  }

  get files(): string[] {
    return [...this.readers.keys(), this.config.sources.invocationHistory];
  }

  get skippedCount(): number {
    return this.skippedTotal;
  }

  /** The most recent skipped lines (at most 200). */
  get skipped(): readonly SkippedLine[] {
    return this.recentSkipped;
  }

  /** Findings raised so far, oldest first (the most recent 1000). */
  get raised(): readonly Finding[] {
    return this.recentFindings;
  }

  get stats() {
    return this.engine.stats;
  }

  /** Findings whose pattern is still going on. */
  active(): Finding[] {
    return [...this.historyFindings, ...this.engine.active()];
  }

  /** Whether a workspace-relative path is one of the logs this monitor reads. */
  watches(rel: string): boolean {
    return rel === this.config.sources.invocationHistory || this.isEventLog(rel);
  }

  /**
   * Finds the logs and reads whatever is new in all of them. The invocation history is re-checked
   * whole unless `history` is false (a caller that knows it has not changed).
   */
  async poll({ history = true }: { history?: boolean } = {}): Promise<MonitorUpdate> {
    const files = await discoverFiles(this.ws, this.config.sources.events);
    for (const rel of files) if (rel !== this.config.sources.invocationHistory && !this.readers.has(rel)) this.readers.set(rel, new EventLogReader(this.ws.path(rel), rel));
    return this.read([...this.readers.keys()], history);
  }

  /** Reads what is new in the given files only (from a file watcher). */
  async pollFiles(rels: readonly string[]): Promise<MonitorUpdate> {
    const logs: string[] = [];
    let history = false;
    for (const rel of rels) {
      if (rel === this.config.sources.invocationHistory) history = true;
      else if (this.isEventLog(rel)) {
        if (!this.readers.has(rel)) this.readers.set(rel, new EventLogReader(this.ws.path(rel), rel));
        logs.push(rel);
      }
    }
    return this.read(logs, history);
  }

  private async read(logs: readonly string[], history: boolean): Promise<MonitorUpdate> {
    const raised: Finding[] = [];
    const skipped: SkippedLine[] = [];
    const sink = {
      event: (e: Parameters<Engine['push']>[0]) => {
        for (const f of this.engine.push(e)) raised.push(f);
      },
      skipped: (s: SkippedLine) => skipped.push(s),
    };
    for (const rel of logs) {
      const reader = this.readers.get(rel);
      if (!reader) continue;
      const result = await reader.read(sink);
      if (result.reset) this.needsRebuild = true;
      if (result.missing) this.readers.delete(rel);
    }
    if (this.needsRebuild) return this.rebuild();
    if (history) raised.push(...(await this.checkHistory(skipped)));
    this.remember(raised);
    this.noteSkipped(skipped);
    return { raised, skipped };
  }

  /** A log was replaced or truncated: what was counted from it no longer holds, so count again. */
  private async rebuild(): Promise<MonitorUpdate> {
    this.needsRebuild = false;
    this.engine = new Engine(this.config);
    const files = [...this.readers.keys()];
    this.readers = new Map(files.map((rel) => [rel, new EventLogReader(this.ws.path(rel), rel)]));
    this.recentFindings.length = 0;
    return this.read(files, true);
  }

  private async checkHistory(skipped: SkippedLine[]): Promise<Finding[]> {
    const rel = this.config.sources.invocationHistory;
    const read = await readInvocationHistory(this.ws, rel).catch((err: Error) => {
      skipped.push({ file: rel, line: 1, field: '(file)', reason: `cannot read (${err.message}); treated as an empty history` });
      return undefined;
    });
    if (!read) return [];
    skipped.push(...read.skipped);
    const engine = new Engine(this.config);
    const raised: Finding[] = [];
    for (const e of historyEvents(read, rel)) raised.push(...engine.push(e));
    this.historyFindings = engine.active();
    // The history is checked whole each time: only what was never raised before is new.
    const fresh = raised.filter((f) => !this.historySeen.has(`${f.episode}|${f.action}`));
    if (this.historySeen.size > 10_000) this.historySeen.clear();
    for (const f of raised) this.historySeen.add(`${f.episode}|${f.action}`);
    return fresh;
  }

  private remember(raised: readonly Finding[]): void {
    this.recentFindings.push(...raised);
    if (this.recentFindings.length > KEEP_FINDINGS) this.recentFindings.splice(0, this.recentFindings.length - KEEP_FINDINGS);
  }

  private noteSkipped(skipped: readonly SkippedLine[]): void {
    this.skippedTotal += skipped.length;
    this.recentSkipped.push(...skipped);
    if (this.recentSkipped.length > KEEP_SKIPPED) this.recentSkipped.splice(0, this.recentSkipped.length - KEEP_SKIPPED);
  }
}
