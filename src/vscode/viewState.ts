import * as vscode from 'vscode';
import type { StopStatus } from '../core/stopAll';
import type { GuardianService } from './guardianService';
import type { Node } from './treeNodes';

/** The context key the view's toolbar reads: STOP when any folder is stopped, else PAUSE when any is paused, else CLEAR. */
export const STOP_STATUS_KEY = 'loopGuardian.stopStatus';

/**
 * What the Loop Guardian view tells at a glance, for the whole window: the loops as the count on
 * its badge (the activity bar shows it), and STOP_ALL's state as a context key, by which the
 * toolbar offers Circuit Break while agents run and Resume while they are held.
 */
export class ViewState implements vscode.Disposable {
  private readonly listener: vscode.Disposable;
  private status: StopStatus | undefined;

  constructor(
    private readonly service: GuardianService,
    private readonly view: vscode.TreeView<Node>,
  ) {
    this.listener = service.onDidChange(() => this.render());
    this.render();
  }

  /** The loops on the badge: halts still going (possible loops, and loops the hook handled, are not counted there). */
  get loops(): number {
    return this.service.all.reduce((n, g) => n + g.state.incidents.filter((i) => i.action === 'halt' && g.handledBy(i) === undefined).length, 0);
  }

  get stopStatus(): StopStatus {
    const statuses = this.service.all.map((g) => g.state.stop.state.status);
    return statuses.includes('STOP') ? 'STOP' : statuses.includes('PAUSE') ? 'PAUSE' : 'CLEAR';
  }

  /** The loops whose rows are selected in the view (Show Details selects one), by id. */
  get selectedLoops(): string[] {
    return this.view.selection.flatMap((n) => (n.kind === 'incident' ? [n.incident.id] : []));
  }

  private render(): void {
    const loops = this.loops;
    this.view.badge = loops > 0 ? { value: loops, tooltip: `${loops} loop${loops === 1 ? '' : 's'} going on` } : undefined;
    const status = this.stopStatus;
    if (status === this.status) return;
    this.status = status;
    void vscode.commands.executeCommand('setContext', STOP_STATUS_KEY, status);
  }

  dispose(): void {
    this.listener.dispose();
  }
}
