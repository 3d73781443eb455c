import type * as vscode from 'vscode';
import type { Finding } from '../core/finding';
import type { TrackedIncident } from '../core/incidentBook';
import type { StopStatus } from '../core/stopAll';
import type { BlockedTasksTree } from './blockedTasksTree';
import type { FindingsTree } from './findingsTree';
import type { GuardianService } from './guardianService';
import type { FindingNotifier, Shown } from './notifier';
import type { ProtectionNotifier } from './protectionNotifier';
import type { LoopStatusBar } from './statusBar';
import type { ViewState } from './viewState';
import { stopConfirmations } from './commands';
import type { LoopCodeActions } from './diagnostics';

/** What the extension exports: a read-only view of its state, for automation and its own tests. */
export interface LoopGuardianApi {
  readonly activationMs: number;
  readonly onDidChange: vscode.Event<void>;
  statusBar(): { text: string; tooltip: string; background: string | undefined; command: string | undefined };
  folders(): { name: string; uri: string; stop: StopStatus; findings: readonly Finding[]; incidents: readonly TrackedIncident[]; closedIncidents: readonly TrackedIncident[]; blocked: string[]; skipped: number; files: readonly string[] }[];
  readonly findingsTree: FindingsTree;
  readonly blockedTasksTree: BlockedTasksTree;
  /** Every loop notification shown in this session (each with its current text, offers and whether it is still on screen). */
  notifications(): readonly Shown[];
  /** Every protection warning shown in this session (an agent whose hook does not run; STOP that cannot reach an agent). */
  protectionWarnings(): readonly string[];
  idle(): Promise<void>;
  /** The window's storage folder the guardian reads other extensions' transcripts from, if any. */
  editorStorage(): string | undefined;
  /** The view's badge (its loops), the STOP_ALL state its toolbar offers actions by, and the loops whose rows are selected. */
  view(): { badge: number; stopStatus: StopStatus; selectedLoops: string[] };
  /** Every confirmation a STOP_ALL command showed in this session. */
  stopConfirmations(): readonly string[];
  /** The titles of the quick fixes this extension offers on a Problems entry of its own (what the light bulb lists from it). */
  quickFixes(uri: vscode.Uri, diagnostic: vscode.Diagnostic): string[];
}

export function createApi(activationMs: number, service: GuardianService, status: LoopStatusBar, findingsTree: FindingsTree, blockedTasksTree: BlockedTasksTree, notifier: FindingNotifier, protection: ProtectionNotifier, viewState: ViewState, codeActions: LoopCodeActions): LoopGuardianApi {
  return {
    activationMs,
    onDidChange: service.onDidChange,
    statusBar: () => {
      const tip = status.item.tooltip;
      return {
        text: status.item.text,
        tooltip: typeof tip === 'string' ? tip : (tip?.value ?? ''),
        background: status.item.backgroundColor?.id,
        command: typeof status.item.command === 'string' ? status.item.command : status.item.command?.command,
      };
    },
    folders: () =>
      service.all.map((g) => ({
        name: g.folder.name,
        uri: g.folder.uri.toString(),
        stop: g.state.stop.state.status,
        findings: g.state.findings,
        incidents: g.state.incidents,
        closedIncidents: g.state.closedIncidents,
        blocked: g.state.blocked.map((b) => b.task_id),
        skipped: g.state.skipped,
        files: g.state.files,
      })),
    findingsTree,
    blockedTasksTree,
    notifications: () => notifier.shown,
    protectionWarnings: () => protection.shown,
    idle: () => service.idle(),
    editorStorage: () => service.editorStorage,
    view: () => ({ badge: viewState.loops, stopStatus: viewState.stopStatus, selectedLoops: viewState.selectedLoops }),
    stopConfirmations: () => stopConfirmations,
    quickFixes: (uri, diagnostic) => codeActions.actionsFor(uri, [diagnostic]).map((a) => a.title),
  };
}
