import * as vscode from 'vscode';
import { severity, type Finding } from '../core/finding';
import type { FolderGuardian } from './folderGuardian';
import type { GuardianService } from './guardianService';
import type { UiSettingsValue } from './uiSettings';

const MUTED_KEY = 'loopGuardian.muted';
/** Bursts within this time are folded into one notification. */
const FOLD_MS = 400;
/** At most one notification this often; findings raised meanwhile wait and are folded. */
const MIN_INTERVAL_MS = 4000;

export function muteKey(folder: vscode.WorkspaceFolder, f: Finding): string {
  return `${folder.uri.toString()}|${f.signal}|${f.session}|${f.subject}`;
}

export interface Shown {
  readonly text: string;
  readonly actions: readonly string[];
}

/**
 * Notifications of new findings: the level the user chose (all, halts only, none); the same
 * finding never twice; bursts folded and rate-limited; muted findings never.
 */
export class FindingNotifier implements vscode.Disposable {
  private readonly notified = new Set<string>();
  private pending: { guardian: FolderGuardian; finding: Finding }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private lastShown = 0;
  private readonly subscription: vscode.Disposable;
  /** Every notification shown, for the log and for tests. */
  readonly shown: Shown[] = [];

  constructor(service: GuardianService, private readonly settings: UiSettingsValue, private readonly memento: vscode.Memento, private readonly log: vscode.LogOutputChannel) {
    this.subscription = service.onDidRaise(({ guardian, findings }) => this.raise(guardian, findings));
  }

  isMuted(key: string): boolean {
    return this.memento.get<string[]>(MUTED_KEY, []).includes(key);
  }

  async mute(key: string): Promise<void> {
    const muted = this.memento.get<string[]>(MUTED_KEY, []);
    if (!muted.includes(key)) await this.memento.update(MUTED_KEY, [...muted, key]);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.subscription.dispose();
  }

  private raise(guardian: FolderGuardian, findings: readonly Finding[]): void {
    const level = this.settings.value.notifications;
    for (const finding of findings) {
      const id = `${guardian.folder.uri.toString()}|${finding.episode}|${finding.action}`;
      if (level === 'none' || (level === 'halts' && finding.action !== 'halt') || finding.action === 'continue') continue;
      if (this.notified.has(id) || this.isMuted(muteKey(guardian.folder, finding))) continue;
      this.notified.add(id);
      this.pending.push({ guardian, finding });
    }
    if (this.pending.length > 0 && !this.timer) {
      const wait = Math.max(FOLD_MS, this.lastShown + MIN_INTERVAL_MS - Date.now());
      this.timer = setTimeout(() => this.flush(), wait);
    }
  }

  private flush(): void {
    this.timer = undefined;
    const batch = this.pending.sort((a, b) => severity(b.finding.action) - severity(a.finding.action));
    this.pending = [];
    const top = batch[0];
    if (!top) return;
    this.lastShown = Date.now();
    const halts = batch.filter((b) => b.finding.action === 'halt').length;
    const where = (vscode.workspace.workspaceFolders?.length ?? 0) > 1 ? ` in ${top.guardian.folder.name}` : '';
    const text =
      batch.length === 1
        ? `Loop Guardian${where}: ${top.finding.message}`
        : `Loop Guardian${where}: ${batch.length} new findings (${halts} halt${halts === 1 ? '' : 's'}). Most severe: ${top.finding.message}`;
    const trusted = vscode.workspace.isTrusted;
    const actions = [...(trusted ? ['Circuit Break', 'Pause'] : []), 'Show Details', 'Mute this Finding'];
    this.shown.push({ text, actions });
    this.log.info(`notified: ${text}`);
    const show = top.finding.action === 'halt' ? vscode.window.showErrorMessage : vscode.window.showWarningMessage;
    void show(text, ...actions).then((choice) => {
      switch (choice) {
        case 'Circuit Break':
          return vscode.commands.executeCommand('loopGuardian.circuitBreak', top.guardian.folder.uri);
        case 'Pause':
          return vscode.commands.executeCommand('loopGuardian.pause', top.guardian.folder.uri);
        case 'Show Details':
          return vscode.commands.executeCommand('loopGuardian.focus');
        case 'Mute this Finding':
          return this.mute(muteKey(top.guardian.folder, top.finding));
        default:
          return undefined;
      }
    });
  }
}
