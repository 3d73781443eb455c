import * as vscode from 'vscode';
import { clip } from '../core/canonical';
import { severity } from '../core/finding';
import type { IncidentChanges, TrackedIncident } from '../core/incidentBook';
import type { FolderGuardian } from './folderGuardian';
import type { GuardianService } from './guardianService';
import type { UiSettingsValue } from './uiSettings';

const MUTED_KEY = 'loopGuardian.mutedIncidents';
/** Incidents notified (with the severity they were notified at), across windows: an old loop read again when a window opens does not announce itself again. */
const NOTIFIED_KEY = 'loopGuardian.notifiedIncidents';
/** The most of a loop's message a notification says before its offers: short enough that they show without expanding it. */
const MESSAGE_CHARS = 160;
/** At most this many loop notifications on screen; the status bar and the view show the rest. */
const MAX_VISIBLE = 3;

/** What a command link in a notification carries: plain JSON, so a URI can hold it. */
export interface IncidentRef {
  /** The folder's index in the window: a notification's text is at most 1000 characters, links included. */
  readonly folder: number;
  readonly incident: string;
}

/** A notification as shown, for the log and for tests. */
export interface Shown {
  readonly incident: string;
  /** The text now on screen (updated in place while the loop grows). */
  text: string;
  /** The actions it offers now, by label. */
  actions: string[];
  /** How many times its text was updated in place. */
  updates: number;
  /** False once it was closed (the loop ended, was muted or dismissed, or STOP_ALL was set). */
  visible: boolean;
}

interface Notice {
  readonly shown: Shown;
  readonly guardian: FolderGuardian;
  incident: TrackedIncident;
  report?: (message: string) => void;
  close: () => void;
}

function muteKey(folder: vscode.WorkspaceFolder, incidentId: string): string {
  return `${folder.uri.toString()}|${incidentId}`;
}

/**
 * A command link in a notification's text. VS Code ends a link's target at a `)` or a space
 * (microsoft/vscode src/vs/workbench/services/notification/common/notificationsModel.ts's link
 * parser), so every character that may not stand in it is escaped, parentheses included.
 */
function link(label: string, command: string, arg: unknown): string {
  const target = encodeURIComponent(JSON.stringify([arg])).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `[${label}](command:${command}?${target})`;
}

/**
 * One notification per incident, at the level the user chose (all, halts only, none), updated in
 * place while the loop grows and closed when it ends, when a person mutes or dismisses it, or when
 * STOP_ALL is set (the offer to stop is then moot); under PAUSE it no longer offers Pause. A
 * notification that shows progress is the one kind VS Code lets an extension update and close,
 * so that is what it is; its actions are command links in its text.
 */
export class FindingNotifier implements vscode.Disposable {
  private readonly notices = new Map<string, Notice>();
  /** Incidents notified, with the severity they were notified at: a loop is never notified twice at one level. */
  private readonly notified = new Map<string, number>();
  private readonly subscriptions: vscode.Disposable[];
  private readonly mutesChanged = new vscode.EventEmitter<void>();
  /** An incident was muted or unmuted: only what shows mutes (the Findings view) draws again. */
  readonly onDidChangeMutes = this.mutesChanged.event;
  /** Every notification shown in this session, oldest first. */
  readonly shown: Shown[] = [];

  constructor(service: GuardianService, private readonly settings: UiSettingsValue, private readonly memento: vscode.Memento, private readonly log: vscode.LogOutputChannel) {
    this.subscriptions = [service.onDidChangeIncidents(({ guardian, changes }) => this.onIncidents(guardian, changes)), service.onDidChange(() => this.onState())];
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
    this.notices.get(key)?.close();
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
    for (const n of [...this.notices.values()]) n.close();
  }

  private wants(incident: TrackedIncident): boolean {
    const level = this.settings.value.notifications;
    if (level === 'none' || incident.action === 'continue') return false;
    return level === 'all' || incident.action === 'halt';
  }

  private onIncidents(guardian: FolderGuardian, changes: IncidentChanges): void {
    for (const incident of changes.closed) this.notices.get(muteKey(guardian.folder, incident.id))?.close();
    for (const incident of [...changes.opened, ...changes.changed]) {
      const key = muteKey(guardian.folder, incident.id);
      const notice = this.notices.get(key);
      if (notice) {
        notice.incident = incident;
        this.render(notice);
        continue;
      }
      if (!this.wants(incident) || this.isMuted(key) || guardian.state.stop.state.status === 'STOP') continue;
      // Once per incident, and again only when it has become more severe than when it was notified
      // (in this window or in an earlier one).
      if (Math.max(this.notified.get(key) ?? -1, this.notifiedBefore(key)) >= severity(incident.action)) continue;
      if (this.notices.size >= MAX_VISIBLE) {
        this.log.info(`not notified (already ${MAX_VISIBLE} on screen): ${incident.lead.message}`);
        continue;
      }
      this.notified.set(key, severity(incident.action));
      this.remember(key, severity(incident.action));
      this.open(key, guardian, incident);
    }
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

  /** STOP_ALL changed somewhere: the offers change with it. */
  private onState(): void {
    for (const notice of [...this.notices.values()]) {
      if (notice.guardian.state.stop.state.status === 'STOP') notice.close();
      else this.render(notice);
    }
  }

  private open(key: string, guardian: FolderGuardian, incident: TrackedIncident): void {
    const shown: Shown = { incident: incident.id, text: '', actions: [], updates: -1, visible: true };
    let finish: () => void = () => undefined;
    const done = new Promise<void>((resolve) => (finish = resolve));
    const notice: Notice = {
      shown,
      guardian,
      incident,
      close: () => {
        if (!shown.visible) return;
        shown.visible = false;
        this.notices.delete(key);
        finish();
      },
    };
    this.notices.set(key, notice);
    this.shown.push(shown);
    this.render(notice);
    this.log.info(`notified: ${shown.text}`);
    // Cancellable: a person who closes it (its X) ends it, for good, rather than leaving a spinning
    // progress item in the status bar; it is not shown again for this loop at this severity.
    void vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Loop Guardian', cancellable: true }, (progress, token) => {
      notice.report = (message) => progress.report({ message });
      notice.report(shown.text);
      token.onCancellationRequested(() => {
        this.log.info(`closed by the person: ${shown.text}`);
        notice.close();
      });
      return done;
    });
  }

  /** Writes the notice's text and offers for the incident and the folder's STOP_ALL as they are now. */
  private render(notice: Notice): void {
    const { guardian, incident, shown } = notice;
    const ref: IncidentRef = { folder: guardian.folder.index, incident: incident.id };
    const status = guardian.state.stop.state.status;
    const offers: [string, string, unknown][] = [];
    if (vscode.workspace.isTrusted && status === 'CLEAR') offers.push(['Circuit Break', 'loopGuardian.circuitBreak', { folder: ref.folder }], ['Pause', 'loopGuardian.pause', { folder: ref.folder }]);
    if (vscode.workspace.isTrusted && status === 'PAUSE') offers.push(['Circuit Break', 'loopGuardian.circuitBreak', { folder: ref.folder }]);
    offers.push(['Show Details', 'loopGuardian.showIncident', ref], ['Mute', 'loopGuardian.muteIncident', ref], ['Dismiss', 'loopGuardian.dismissIncident', ref]);
    const where = (vscode.workspace.workspaceFolders?.length ?? 0) > 1 ? `${guardian.folder.name}: ` : '';
    const what = incident.action === 'halt' ? '' : 'Possible loop: ';
    const paused = status === 'PAUSE' ? '(paused: agents start nothing new) ' : '';
    const text = `${where}${paused}${what}${clip(incident.lead.message, MESSAGE_CHARS)} — ${offers.map(([label, command, arg]) => link(label, command, arg)).join(' · ')}`;
    if (text === shown.text) return;
    shown.text = text;
    shown.actions = offers.map(([label]) => label);
    shown.updates++;
    notice.report?.(text);
  }
}
