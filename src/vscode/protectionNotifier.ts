import * as vscode from 'vscode';
import type { AgentEnforcement } from '../watch/enforcement';
import type { FolderGuardian } from './folderGuardian';
import type { GuardianService } from './guardianService';

const WARNED_KEY = 'loopGuardian.protectionWarnings';
/** An agent that worked here this recently is one STOP should reach now. */
const RECENT_WORK_MS = 60 * 60_000;

/**
 * Says, once, what a person must not miss about protection (issues 24 and 27): an agent whose
 * hook is installed but does not run here (with the cause and the fix), and, while STOP_ALL says
 * STOP, the agents working here that STOP cannot reach (watched only, or not hooked). Each warning
 * is shown once per agent and cause (per STOP for the second), remembered in the workspace's state
 * across windows: a person who closed it is not asked again until something changes.
 */
export class ProtectionNotifier implements vscode.Disposable {
  /** Every warning shown in this session (for the log and the tests). */
  readonly shown: string[] = [];
  private readonly listener: vscode.Disposable;

  constructor(
    private readonly service: GuardianService,
    private readonly memento: vscode.Memento,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.listener = service.onDidChange(() => this.check());
  }

  private warned(): string[] {
    return this.memento.get<string[]>(WARNED_KEY, []);
  }

  /** Shows a warning unless it was shown before under this key; the key is remembered first (at most 200). */
  private once(key: string, message: string, actions: { label: string; run: () => unknown }[], level: 'warning' | 'error' = 'warning'): void {
    const warned = this.warned();
    if (warned.includes(key)) return;
    void this.memento.update(WARNED_KEY, [...warned, key].slice(-200));
    this.shown.push(message);
    this.log.warn(message);
    const show = level === 'error' ? vscode.window.showErrorMessage : vscode.window.showWarningMessage;
    void show(message, ...actions.map((a) => a.label)).then((picked) => actions.find((a) => a.label === picked)?.run());
  }

  /** What the last check saw (each folder's STOP and its agents' states): the state changes on every line a log gets, these seldom. */
  private seen = '';

  private check(): void {
    const now = this.service.all.map((g) => `${g.folder.uri.toString()}|${g.state.stop.state.status}|${g.state.stop.state.timestamp ?? ''}|${g.state.foundAgents.map((a) => `${a.id}:${a.state}:${a.lastWork ?? ''}:${a.problems.map((p) => p.cause).join(';')}`).join(',')}`).join('\n');
    if (now === this.seen) return;
    this.seen = now;
    for (const g of this.service.all) {
      for (const a of g.state.foundAgents) {
        if (a.state === 'not-running') this.notRunning(g, a);
      }
      if (g.state.stop.state.status === 'STOP') this.stopCannotReach(g);
    }
  }

  private notRunning(g: FolderGuardian, a: AgentEnforcement): void {
    const first = a.problems[0];
    const key = `${g.folder.uri.toString()}|${a.id}|not-running|${a.problems.map((p) => p.cause).join('|')}`;
    const why = first ? ` ${first.cause}. Fix: ${first.fix}.` : '';
    this.once(key, `${a.label} is not protected in ${g.folder.name}: its Loop Guardian hook is installed but does not run, so its loops are not stopped.${why}`, [
      { label: 'Show Agents', run: () => vscode.commands.executeCommand('loopGuardian.focus') },
    ]);
  }

  private stopCannotReach(g: FolderGuardian): void {
    const now = Date.now();
    const unreachable = g.state.foundAgents.filter((a) => a.state !== 'enforced' && a.state !== 'installed' && a.state !== 'unseen' && a.lastWork !== undefined && now - a.lastWork < RECENT_WORK_MS);
    if (unreachable.length === 0) return;
    const stop = g.state.stop.state;
    const key = `${g.folder.uri.toString()}|stop|${stop.timestamp ?? ''}|${unreachable.map((a) => a.id).join(',')}`;
    const names = unreachable.map((a) => `${a.label} (${a.state === 'watched' ? 'watched, no hook' : a.state === 'not-running' ? 'its hook does not run' : 'no hook'})`).join(', ');
    const hookable = unreachable.find((a) => a.hookFile !== undefined && !a.hooked);
    const actions = [
      ...(hookable ? [{ label: `Install ${hookable.label}'s Hook`, run: () => vscode.commands.executeCommand('loopGuardian.installHook', { agent: hookable.id }) }] : []),
      { label: 'Show Agents', run: () => vscode.commands.executeCommand('loopGuardian.focus') },
    ];
    // Worked after STOP was set: its calls run under STOP. An error, not a warning (issue 33).
    const since = stop.timestamp !== undefined ? Date.parse(stop.timestamp) : NaN;
    const running = unreachable.filter((a) => !Number.isNaN(since) && (a.lastWork as number) > since);
    if (running.length > 0) {
      this.once(
        `${key}|running|${running.map((a) => a.id).join(',')}`,
        `${running.map((a) => a.label).join(', ')} ${running.length === 1 ? 'is' : 'are'} working under STOP in ${g.folder.name}: ${running.length === 1 ? 'its' : 'their'} calls run, because STOP reaches only hooked agents (${running.map((a) => `${a.label}: ${a.state === 'not-running' ? 'its hook does not run' : 'no hook'}`).join('; ')}).`,
        actions,
        'error',
      );
      return;
    }
    this.once(key, `STOP is set in ${g.folder.name}, but it cannot reach ${names}: only hooked agents are stopped, so ${unreachable.length === 1 ? 'it keeps' : 'they keep'} running.`, actions);
  }

  dispose(): void {
    this.listener.dispose();
  }
}
