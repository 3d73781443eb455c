import * as vscode from 'vscode';
import { AGENTS } from '../agents';
import { clip } from '../core/canonical';
import { severity } from '../core/finding';
import type { IncidentChanges, TrackedIncident } from '../core/incidentBook';
import type { FolderGuardian } from './folderGuardian';
import type { GuardianService } from './guardianService';
import type { UiSettingsValue } from './uiSettings';
import { outcomeWords } from '../state/hookOutcomes';

const MUTED_KEY = 'loopGuardian.mutedIncidents';
/** Incidents notified (with the severity they were notified at), across windows: an old loop read again when a window opens does not announce itself again. */
const NOTIFIED_KEY = 'loopGuardian.notifiedIncidents';
/** The most of a loop's message a notification says: it reads in one glance, the view has the rest. */
const MESSAGE_CHARS = 200;
/** At most this many loop notifications within BURST_MS (many loops at once: the status bar and the view show the rest). */
const MAX_BURST = 3;
const BURST_MS = 60_000;
/** A loop that grew this many times after STOP was seen went on under STOP (the first may be a call already under way). */
const AFTER_STOP_GROWTH = 2;
/** The severity a loop that STOP did not stop is notified at: above every action's. */
const AFTER_STOP = 10;
const CIRCUIT_BREAK = 'Circuit Break';

function agentName(id: string): string {
  return AGENTS.find((a) => a.id === id)?.label ?? id;
}

/** What the `loopGuardian.*Incident` commands take from a notification's offers: plain JSON. */
export interface IncidentRef {
  readonly folder: number;
  readonly incident: string;
}

/** A notification as shown, for the log and for tests. */
export interface Shown {
  readonly incident: string;
  /** `warning` for a loop that halts an agent, `information` for a possible loop, `error` for a loop that went on under STOP. */
  readonly level: 'information' | 'warning' | 'error';
  readonly text: string;
  /** The offers it makes: its buttons, less Circuit Break once STOP is set (it then only says STOP is set). */
  actions: readonly string[];
  /** False once a person closed it or picked an offer. */
  visible: boolean;
}

function muteKey(folder: vscode.WorkspaceFolder, incidentId: string): string {
  return `${folder.uri.toString()}|${incidentId}`;
}

/**
 * One notification per loop, at the level the user chose (all, halts only, none): a warning for a
 * loop that halts an agent, information for a possible loop, their offers as buttons that show
 * without expanding it (VS Code expands a notification that has actions:
 * microsoft/vscode src/vs/workbench/common/notifications.ts, `setActions`). A person who closes it
 * has seen it: it is not shown again, in this window or when the workspace opens again, unless the
 * loop becomes more severe. While STOP_ALL says STOP no loop is announced, except one that went on
 * under STOP (an agent STOP cannot reach): that is an error, with the one click that hooks it.
 */
export class FindingNotifier implements vscode.Disposable {
  /** Incidents notified, with the severity they were notified at: a loop is never notified twice at one level. */
  private readonly notified = new Map<string, number>();
  /** When the latest loop notifications were shown (ms since the epoch). */
  private recent: number[] = [];
  /** Under STOP: each open incident's count when STOP was seen (or when it opened under STOP). */
  private readonly atStop = new Map<string, number>();
  private readonly subscriptions: vscode.Disposable[];
  private readonly mutesChanged = new vscode.EventEmitter<void>();
  /** An incident was muted or unmuted: only what shows mutes (the Findings view) draws again. */
  readonly onDidChangeMutes = this.mutesChanged.event;
  /** Every notification shown in this session, oldest first. */
  readonly shown: Shown[] = [];

  constructor(service: GuardianService, private readonly settings: UiSettingsValue, private readonly memento: vscode.Memento, private readonly log: vscode.LogOutputChannel) {
    this.subscriptions = [service.onDidChangeIncidents(({ guardian, changes }) => this.onIncidents(guardian, changes)), service.onDidChange(() => this.onState(service))];
  }

  isMuted(key: string): boolean {
    return this.memento.get<string[]>(MUTED_KEY, []).includes(key);
  }

  isIncidentMuted(guardian: FolderGuardian, incidentId: string): boolean {
    return this.isMuted(muteKey(guardian.folder, incidentId));
  }

  /** Mutes one incident's notifications (it stays in the view and the status bar); true if it was not muted. */
  async mute(guardian: FolderGuardian, incidentId: string): Promise<boolean> {
    const key = muteKey(guardian.folder, incidentId);
    const muted = this.memento.get<string[]>(MUTED_KEY, []);
    if (muted.includes(key)) return false;
    // The latest 500 mutes are kept: an incident's id names the events it started at, so old ones never come back.
    await this.memento.update(MUTED_KEY, [...muted, key].slice(-500));
    this.mutesChanged.fire();
    return true;
  }

  async unmute(guardian: FolderGuardian, incidentId: string): Promise<boolean> {
    const key = muteKey(guardian.folder, incidentId);
    const muted = this.memento.get<string[]>(MUTED_KEY, []);
    if (!muted.includes(key)) return false;
    await this.memento.update(MUTED_KEY, muted.filter((k) => k !== key));
    this.mutesChanged.fire();
    return true;
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.mutesChanged.dispose();
  }

  private wants(incident: TrackedIncident): boolean {
    const level = this.settings.value.notifications;
    if (level === 'none' || incident.action === 'continue') return false;
    return level === 'all' || incident.action === 'halt';
  }

  private onIncidents(guardian: FolderGuardian, changes: IncidentChanges): void {
    for (const incident of changes.closed) this.atStop.delete(muteKey(guardian.folder, incident.id));
    const stopped = guardian.state.stop.state.status === 'STOP';
    for (const incident of [...changes.opened, ...changes.changed]) {
      const key = muteKey(guardian.folder, incident.id);
      if (this.isMuted(key) || this.settings.value.notifications === 'none') continue;
      if (stopped) {
        if (!guardian.readingWhole) this.underStop(key, guardian, incident);
        continue;
      }
      if (!this.wants(incident)) continue;
      this.announce(key, guardian, incident, severity(incident.action));
    }
  }

  /**
   * A loop read while STOP holds: if it keeps growing, its agent is not refused (watched only, or
   * its hook does not run), and a person who set STOP believes it stopped. Read as a person would:
   * a call already under way when STOP was set may still finish and be logged, so the loop must
   * grow twice after STOP was seen, and never for an agent whose hook runs (its calls are refused).
   */
  private underStop(key: string, guardian: FolderGuardian, incident: TrackedIncident): void {
    const agent = guardian.agentOfSession(incident.session);
    if (agent?.state === 'enforced') return;
    const base = this.atStop.get(key);
    if (base === undefined) {
      // Opened under STOP: its newest repeat may be that call under way.
      this.atStop.set(key, incident.count - 1);
      return;
    }
    if (incident.count < base + AFTER_STOP_GROWTH) return;
    this.announce(key, guardian, incident, AFTER_STOP);
  }

  /** STOP seen: the count each open loop had then is what "went on under STOP" is measured from. */
  private onState(service: GuardianService): void {
    for (const guardian of service.all) {
      const stopped = guardian.state.stop.state.status === 'STOP';
      if (stopped) this.withdrawCircuitBreak();
      for (const incident of guardian.state.incidents) {
        const key = muteKey(guardian.folder, incident.id);
        if (!stopped) this.atStop.delete(key);
        else if (!this.atStop.has(key)) this.atStop.set(key, incident.count);
      }
    }
  }

  /** Shows the incident's notification at this level unless it was shown at it (or above) before, here or in an earlier window. */
  private announce(key: string, guardian: FolderGuardian, incident: TrackedIncident, level: number): void {
    if (Math.max(this.notified.get(key) ?? -1, this.notifiedBefore(key)) >= level) return;
    // A loop that went on under STOP is always said; other loops at most MAX_BURST a minute.
    const now = Date.now();
    this.recent = this.recent.filter((t) => now - t < BURST_MS);
    if (level !== AFTER_STOP && this.recent.length >= MAX_BURST) {
      this.log.info(`not notified (already ${MAX_BURST} in the last minute): ${incident.lead.message}`);
      return;
    }
    this.recent.push(now);
    this.notified.set(key, level);
    this.remember(key, level);
    this.open(guardian, incident, level);
  }

  /** The severity an incident was notified at in an earlier window, or -1. */
  private notifiedBefore(key: string): number {
    const entry = this.memento.get<[string, number][]>(NOTIFIED_KEY, []).find(([k]) => k === key);
    return entry?.[1] ?? -1;
  }

  /** Remembers a notification across windows (the latest 500: an incident's id names the events it started at). */
  private remember(key: string, level: number): void {
    const kept = this.memento.get<[string, number][]>(NOTIFIED_KEY, []).filter(([k]) => k !== key);
    void this.memento.update(NOTIFIED_KEY, [...kept, [key, level] as [string, number]].slice(-500));
  }

  /**
   * A notification's Circuit Break, picked: VS Code gives no way to change a notification's buttons
   * once shown, so one shown before STOP (or before the hook handled its loop) still has it; picked
   * then, it writes nothing again and says why.
   */
  private circuitBreakFrom(guardian: FolderGuardian, folder: number): unknown {
    if (guardian.state.stop.state.status === 'STOP') return vscode.window.showInformationMessage(`STOP is already set in ${guardian.folder.name}${guardian.state.stop.state.timestamp ? ` (since ${guardian.state.stop.state.timestamp})` : ''}.`);
    return vscode.commands.executeCommand('loopGuardian.circuitBreak', { folder });
  }

  /** The notifications still on screen that offer Circuit Break no longer do once STOP is set (as the record says; see circuitBreakFrom). */
  private withdrawCircuitBreak(): void {
    for (const s of this.shown) if (s.visible && s.actions.includes(CIRCUIT_BREAK)) s.actions = s.actions.filter((a) => a !== CIRCUIT_BREAK);
  }

  private open(guardian: FolderGuardian, incident: TrackedIncident, level: number): void {
    const ref: IncidentRef = { folder: guardian.folder.index, incident: incident.id };
    const where = (vscode.workspace.workspaceFolders?.length ?? 0) > 1 ? `${guardian.folder.name}: ` : '';
    const message = clip(incident.lead.message, MESSAGE_CHARS);
    const offers: [string, () => unknown][] = [];
    let text: string;
    let kind: Shown['level'];
    if (level === AFTER_STOP) {
      const agent = guardian.agentOfSession(incident.session);
      const who = agent?.label ?? 'An agent';
      kind = 'error';
      text = `${where}${who} went on under STOP: ${withoutFinalStop(message)}. STOP reaches only agents whose Loop Guardian hook runs.`;
      if (agent?.hookFile !== undefined && !agent.hooked) offers.push([`Install ${agent.label}'s Hook`, () => vscode.commands.executeCommand('loopGuardian.installHook', { agent: agent.id })]);
    } else if (guardian.handledBy(incident) !== undefined) {
      // The hook already refused it (and ended the run where the agent ends it): said first, no alarm, nothing to break.
      const handled = guardian.handledBy(incident) as NonNullable<ReturnType<FolderGuardian['handledBy']>>;
      kind = 'information';
      text = `${where}${outcomeWords(handled, guardian.agentOfSession(incident.session)?.label ?? agentName(handled.agent))}: ${message}`;
    } else {
      const status = guardian.state.stop.state.status;
      kind = incident.action === 'halt' ? 'warning' : 'information';
      const paused = status === 'PAUSE' ? '(paused: agents start nothing new) ' : '';
      text = `${where}${paused}${incident.action === 'halt' ? '' : 'Possible loop: '}${message}`;
      if (vscode.workspace.isTrusted && status !== 'STOP') offers.push([CIRCUIT_BREAK, () => this.circuitBreakFrom(guardian, ref.folder)]);
    }
    offers.push(['Show Details', () => vscode.commands.executeCommand('loopGuardian.showIncident', ref)], ['Mute', () => vscode.commands.executeCommand('loopGuardian.muteIncident', ref)]);
    const shown: Shown = { incident: incident.id, level: kind, text, actions: offers.map(([label]) => label), visible: true };
    this.shown.push(shown);
    this.log.info(`notified (${kind}): ${text}`);
    const show = kind === 'error' ? vscode.window.showErrorMessage : kind === 'warning' ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
    // Settles when a person picks an offer or closes it (its X): either way it is gone for good.
    void show(text, ...shown.actions).then((picked) => {
      shown.visible = false;
      if (picked === undefined) this.log.info(`closed by the person: ${text}`);
      return offers.find(([label]) => label === picked)?.[1]();
    });
  }
}

/** A sentence without its closing full stops and blanks (a loop, not a regular expression: linear whatever the text). */
function withoutFinalStop(text: string): string {
  let end = text.length;
  while (end > 0 && (text[end - 1] === '.' || /\s/.test(text[end - 1] as string))) end--;
  return text.slice(0, end);
}
