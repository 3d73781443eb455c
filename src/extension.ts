import * as vscode from 'vscode';
import { AgentTerminalExits } from './vscode/agentTerminalExits';
import { createApi, type LoopGuardianApi } from './vscode/api';
import { BlockedTasksTree } from './vscode/blockedTasksTree';
import { registerCommands } from './vscode/commands';
import { FindingDiagnostics, LoopCodeActions } from './vscode/diagnostics';
import { FINDINGS_VIEW, FindingsTree } from './vscode/findingsTree';
import { GuardianService } from './vscode/guardianService';
import { IncidentPublisher } from './vscode/incidentPublisher';
import { keepLauncherCurrent } from './vscode/launcher';
import { OtlpListener } from './vscode/otlpListener';
import { FindingNotifier } from './vscode/notifier';
import { ProtectionNotifier } from './vscode/protectionNotifier';
import { LoopStatusBar } from './vscode/statusBar';
import { UiSettingsValue } from './vscode/uiSettings';
import { ViewState } from './vscode/viewState';

/** Composes the extension from its parts; every part is disposed with the extension. */
export function activate(context: vscode.ExtensionContext): LoopGuardianApi {
  const started = performance.now();
  const log = vscode.window.createOutputChannel('Loop Guardian', { log: true });
  const settings = new UiSettingsValue();
  const service = new GuardianService(settings, log, context.storageUri, context.globalStorageUri);
  const status = new LoopStatusBar(service, settings);
  const notifier = new FindingNotifier(service, settings, context.workspaceState, log);
  const protection = new ProtectionNotifier(service, context.workspaceState, log);
  const findingsTree = new FindingsTree(service, notifier);
  const blockedTasksTree = new BlockedTasksTree(service);
  const findingsView = vscode.window.createTreeView(FINDINGS_VIEW, { treeDataProvider: findingsTree, showCollapseAll: true });
  const viewState = new ViewState(service, findingsView);
  const diagnostics = new FindingDiagnostics(service, settings);
  const codeActions = new LoopCodeActions(diagnostics);
  context.subscriptions.push(
    log,
    settings,
    service,
    status,
    findingsTree,
    blockedTasksTree,
    notifier,
    protection,
    diagnostics,
    vscode.languages.registerCodeActionsProvider({ scheme: 'file' }, codeActions, { providedCodeActionKinds: LoopCodeActions.kinds }),
    new IncidentPublisher(service, log),
    new OtlpListener(service, log),
    new AgentTerminalExits(service, log),
    findingsView,
    viewState,
    vscode.window.createTreeView('loopGuardian.blockedTasks', { treeDataProvider: blockedTasksTree }),
    ...registerCommands({ service, notifier, log, extensionPath: context.extensionPath, extensionId: context.extension.id, reveal: (g, i) => findingsTree.reveal(findingsView, g, i) }),
  );
  keepLauncherCurrent(context.extensionPath, log);
  const activationMs = performance.now() - started;
  log.info(`activated in ${activationMs.toFixed(1)} ms, watching ${service.all.length} folder(s)${vscode.workspace.isTrusted ? '' : ' (untrusted: read-only)'}`);
  return createApi(activationMs, service, status, findingsTree, blockedTasksTree, notifier, protection, viewState, codeActions);
}

export function deactivate(): void {}
