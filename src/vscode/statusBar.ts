import * as vscode from 'vscode';
import { severity, type Finding } from '../core/finding';
import type { GuardianService } from './guardianService';
import type { UiSettingsValue } from './uiSettings';

export const STATUS_ITEM_ID = 'loopGuardian.status';

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** The loop indicator: calm, warning or error colours, STOP/PAUSE, counts, a tooltip of findings. */
export class LoopStatusBar implements vscode.Disposable {
  readonly item: vscode.StatusBarItem;
  private readonly subscriptions: vscode.Disposable[];

  constructor(private readonly service: GuardianService, private readonly settings: UiSettingsValue) {
    this.item = vscode.window.createStatusBarItem(STATUS_ITEM_ID, vscode.StatusBarAlignment.Left, 100);
    this.item.name = 'Loop Guardian';
    this.item.command = 'loopGuardian.focus';
    this.subscriptions = [service.onDidChange(() => this.render()), settings.onDidChange(() => this.render())];
    this.render();
  }

  render(): void {
    const guardians = this.service.all;
    const findings = guardians.flatMap((g) => g.state.findings.map((f) => ({ folder: g.folder.name, f })));
    const halts = findings.filter((x) => x.f.action === 'halt').length;
    const warnings = findings.filter((x) => x.f.action === 'warn' || x.f.action === 'escalate').length;
    const stops = guardians.filter((g) => g.state.stop.state.status === 'STOP');
    const pauses = guardians.filter((g) => g.state.stop.state.status === 'PAUSE');

    const parts: string[] = [];
    if (stops.length > 0) parts.push('$(debug-stop) STOP');
    else if (pauses.length > 0) parts.push('$(debug-pause) PAUSE');
    if (halts > 0) parts.push(`$(error) ${plural(halts, 'halt')}`);
    if (warnings > 0) parts.push(`$(warning) ${plural(warnings, 'warning')}`);
    if (parts.length === 0) parts.push('$(pass) No loops');
    this.item.text = parts.join('  ');
    this.item.backgroundColor =
      stops.length > 0 || halts > 0
        ? new vscode.ThemeColor('statusBarItem.errorBackground')
        : pauses.length > 0 || warnings > 0
          ? new vscode.ThemeColor('statusBarItem.warningBackground')
          : undefined;
    this.item.accessibilityInformation = { label: `Loop Guardian: ${this.item.text.replace(/\$\([\w~-]*\)\s*/g, '')}` };

    const md = new vscode.MarkdownString(undefined, true);
    md.appendMarkdown('**Loop Guardian**\n\n');
    for (const g of guardians) {
      const s = g.state.stop.state;
      if (s.status !== 'CLEAR') md.appendMarkdown(`$(debug-${s.status === 'STOP' ? 'stop' : 'pause'}) STOP_ALL is **${s.status}**${guardians.length > 1 ? ` in ${g.folder.name}` : ''}${s.timestamp ? ` since ${s.timestamp}` : ''}${s.reason ? `: ${escape(s.reason)}` : ''}\n\n`);
    }
    if (findings.length === 0) md.appendMarkdown(`Watching ${plural(guardians.reduce((n, g) => n + g.state.files.length, 0), 'log')}: no loops.\n\n`);
    const sorted = [...findings].sort((a, b) => severity(b.f.action) - severity(a.f.action));
    for (const { folder, f } of sorted.slice(0, 10)) md.appendMarkdown(`- ${line(f)}${guardians.length > 1 ? ` _(${folder})_` : ''}\n`);
    if (sorted.length > 10) md.appendMarkdown(`- … and ${sorted.length - 10} more\n`);
    md.appendMarkdown('\nClick to open the Loop Guardian view.');
    this.item.tooltip = md;

    if (this.settings.value.statusBarVisible && guardians.length > 0) this.item.show();
    else this.item.hide();
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.item.dispose();
  }
}

function escape(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>]/g, '\\$&');
}

function line(f: Finding): string {
  return `**${f.action.toUpperCase()}** \`${f.signal}\` ${escape(f.message)} — ${escape(f.at.file)}:${f.at.line}`;
}
