import * as vscode from 'vscode';
import { ENFORCEMENT_WORDS } from '../watch/enforcement';
import type { GuardianService } from './guardianService';
import type { UiSettingsValue } from './uiSettings';
import { outcomeWords } from '../state/hookOutcomes';

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
    const incidents = guardians.flatMap((g) => g.state.incidents.map((i) => ({ guardian: g, i })));
    // A loop the hook refused (no call ran since) is handled: said, not an alarm.
    const isHandled = incidents.map((x) => x.guardian.handledBy(x.i) !== undefined);
    const handled = isHandled.filter(Boolean).length;
    const loops = incidents.filter((x, n) => x.i.action === 'halt' && !isHandled[n]).length;
    const warnings = incidents.length - loops - handled;
    const stops = guardians.filter((g) => g.state.stop.state.status === 'STOP');
    const pauses = guardians.filter((g) => g.state.stop.state.status === 'PAUSE');

    const parts: string[] = [];
    if (stops.length > 0) parts.push('$(debug-stop) STOP');
    else if (pauses.length > 0) parts.push('$(debug-pause) PAUSE');
    if (loops > 0) parts.push(`$(error) ${plural(loops, 'loop')}`);
    if (warnings > 0) parts.push(`$(warning) ${plural(warnings, 'possible loop')}`);
    if (handled > 0) parts.push(`$(shield) ${handled} handled`);
    if (parts.length === 0) parts.push('$(pass) No loops');
    this.item.text = parts.join('  ');
    this.item.backgroundColor =
      stops.length > 0 || loops > 0
        ? new vscode.ThemeColor('statusBarItem.errorBackground')
        : pauses.length > 0 || warnings > 0
          ? new vscode.ThemeColor('statusBarItem.warningBackground')
          : undefined;
    this.item.accessibilityInformation = { label: `Loop Guardian: ${this.item.text.replace(/\$\([\w~-]*\)\s*/g, '')}` };

    const md = new vscode.MarkdownString(undefined, true);
    md.appendMarkdown('**Loop Guardian**\n\n');
    for (const g of guardians) {
      const s = g.state.stop.state;
      if (s.status !== 'CLEAR') {
        md.appendMarkdown(`$(debug-${s.status === 'STOP' ? 'stop' : 'pause'}) STOP_ALL is **${s.status}**${guardians.length > 1 ? ` in ${g.folder.name}` : ''}${s.timestamp ? ` since ${s.timestamp}` : ''}${s.reason ? `: ${escape(s.reason)}` : ''}\n\n`);
        // Only hooked agents are held by it: the others working here are named.
        const unreached = g.state.foundAgents.filter((a) => a.state === 'watched' || a.state === 'off' || a.state === 'not-running');
        if (unreached.length > 0) md.appendMarkdown(`$(warning) It does not reach ${unreached.map((a) => `${escape(a.label)} (${a.state === 'not-running' ? 'its hook does not run' : 'no hook'})`).join(', ')}\n\n`);
      }
    }
    // How well each agent found here is protected, as of the last look (re-read when its settings, the heartbeat or a transcript change).
    for (const g of guardians) {
      const agents = g.state.foundAgents;
      if (agents.length > 0) md.appendMarkdown(`Protection${guardians.length > 1 ? ` in ${escape(g.folder.name)}` : ''}: ${agents.map((a) => `${escape(a.label)} ${escape(ENFORCEMENT_WORDS[a.state])}`).join('; ')}\n\n`);
    }
    if (incidents.length === 0) md.appendMarkdown(`Watching ${plural(guardians.reduce((n, g) => n + g.state.files.length, 0), 'log')}: no loops.\n\n`);
    for (const { guardian, i } of incidents.slice(0, 10)) {
      const last = i.evidence[i.evidence.length - 1] ?? i.lead.at;
      const done = guardian.handledBy(i);
      md.appendMarkdown(`- **${done ? `Handled (${escape(outcomeWords(done, guardian.agentOfSession(i.session)?.label ?? 'the agent'))})` : i.action === 'halt' ? 'Loop' : 'Possible loop'}** ${escape(i.lead.message)} — ${escape(last.file)}:${last.line}${guardians.length > 1 ? ` _(${guardian.folder.name})_` : ''}\n`);
    }
    if (incidents.length > 10) md.appendMarkdown(`- … and ${incidents.length - 10} more\n`);
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
