import * as vscode from 'vscode';

export type NotificationLevel = 'all' | 'halts' | 'none';

/** The extension's settings: UI preferences only; detection thresholds live in config.json. */
export interface UiSettings {
  readonly notifications: NotificationLevel;
  readonly statusBarVisible: boolean;
  readonly debounceMs: number;
  /** One Problems entry per open incident, or none. */
  readonly problems: boolean;
  /** An incident with nothing new for this long is over (0: never by idleness). */
  readonly idleMinutes: number;
}

export function readUiSettings(): UiSettings {
  const c = vscode.workspace.getConfiguration('loopGuardian');
  const level = c.get<string>('notifications', 'halts');
  return {
    notifications: level === 'all' || level === 'none' ? level : 'halts',
    statusBarVisible: c.get<boolean>('statusBar.visible', true),
    debounceMs: Math.max(0, Math.min(5000, c.get<number>('debounceMs', 75))),
    problems: c.get<boolean>('problems.enabled', true),
    idleMinutes: Math.max(0, Math.min(24 * 60, c.get<number>('incidents.idleMinutes', 15))),
  };
}

/** The settings, kept current. */
export class UiSettingsValue implements vscode.Disposable {
  private current = readUiSettings();
  private readonly emitter = new vscode.EventEmitter<UiSettings>();
  readonly onDidChange = this.emitter.event;
  private readonly listener = vscode.workspace.onDidChangeConfiguration((e) => {
    if (!e.affectsConfiguration('loopGuardian')) return;
    this.current = readUiSettings();
    this.emitter.fire(this.current);
  });

  get value(): UiSettings {
    return this.current;
  }

  dispose(): void {
    this.listener.dispose();
    this.emitter.dispose();
  }
}
