import * as vscode from 'vscode';
import { defaultConfig } from '../core/config';
import { HOOK_AGENTS, hookAgent } from '../agents';
import { hookCommand } from '../agents/hookSettings';
import { installHook } from '../state/agentSettings';
import { installLauncher, windowsCommandFor } from '../state/launcher';
import type { StopStatus } from '../core/stopAll';
import { createDefaultConfig, setAgentWatched } from '../state/configFile';
import { GuardianLog } from '../state/guardianLog';
import { StopAllFile } from '../state/stopAllFile';
import { TaskOperations } from '../tasks/taskOperations';
import { PATHS } from '../state/workspace';
import { blockedTasks } from './blockedTasksTree';
import { extensionLauncherTarget } from './launcher';
import type { FolderGuardian } from './folderGuardian';
import type { GuardianService } from './guardianService';
import type { FindingNotifier } from './notifier';
import type { TrackedIncident } from '../core/incidentBook';
import type { Node } from './treeNodes';

/** Command ids, as contributed in package.json. */
export const Command = {
  circuitBreak: 'loopGuardian.circuitBreak',
  pause: 'loopGuardian.pause',
  resume: 'loopGuardian.resume',
  forceEscalate: 'loopGuardian.forceEscalate',
  analyzeTask: 'loopGuardian.analyzeTask',
  unblockTask: 'loopGuardian.unblockTask',
  scanNow: 'loopGuardian.scanNow',
  showLog: 'loopGuardian.showLog',
  openStopAll: 'loopGuardian.openStopAll',
  openConfig: 'loopGuardian.openConfig',
  copyDiagnostics: 'loopGuardian.copyDiagnostics',
  openSummary: 'loopGuardian.openSummary',
  showIncident: 'loopGuardian.showIncident',
  muteIncident: 'loopGuardian.muteIncident',
  unmuteIncident: 'loopGuardian.unmuteIncident',
  dismissIncident: 'loopGuardian.dismissIncident',
  dismissAll: 'loopGuardian.dismissAll',
  watchAgent: 'loopGuardian.watchAgent',
  openWalkthrough: 'loopGuardian.openWalkthrough',
  unwatchAgent: 'loopGuardian.unwatchAgent',
  focus: 'loopGuardian.focus',
  installHook: 'loopGuardian.installHook',
} as const;

/**
 * A command's argument: a tree node, a folder's URI, or (from notifications' links, scripts and
 * tests) a folder (its URI, the URI's text, or its index in the window) with a task, an agent or
 * an incident.
 */
type Target = Node | vscode.Uri | { folder?: vscode.Uri | string | number; task?: string; agent?: string; incident?: string } | undefined;

interface Deps {
  readonly service: GuardianService;
  readonly notifier: FindingNotifier;
  /** Shows an incident's row in the Findings view, selected. */
  readonly reveal: (guardian: FolderGuardian, incident: TrackedIncident) => Promise<void>;
  readonly log: vscode.LogOutputChannel;
  /** Where the extension is installed: its bundled CLI runs the agents' hook (through the launcher). */
  readonly extensionPath: string;
  /** publisher.name, for the walkthrough's id. */
  readonly extensionId: string;
}

function isNode(x: Target): x is Node {
  return typeof x === 'object' && x !== null && 'kind' in x;
}

/** The agent a command is about: a found agent's row, or `agent` of a script's argument. */
function agentIdOf(target: Target): string | undefined {
  if (isNode(target)) return target.kind === 'foundAgent' ? target.agent.id : undefined;
  return target && !(target instanceof vscode.Uri) ? target.agent : undefined;
}

function trusted(): boolean {
  if (vscode.workspace.isTrusted) return true;
  void vscode.window.showWarningMessage('Loop Guardian writes nothing in an untrusted workspace. Trust the workspace to stop agents or change tasks.');
  return false;
}

async function guardiansOf(deps: Deps, target: Target, allowAll: boolean): Promise<FolderGuardian[]> {
  if (target instanceof vscode.Uri) return [deps.service.get(target)].filter((g): g is FolderGuardian => g !== undefined);
  if (isNode(target) && 'guardian' in target) return [target.guardian];
  if (target && !isNode(target) && typeof target.folder === 'string') return guardiansOf(deps, vscode.Uri.parse(target.folder), allowAll);
  if (target && !isNode(target) && typeof target.folder === 'number') {
    const folder = vscode.workspace.workspaceFolders?.[target.folder];
    return folder ? guardiansOf(deps, folder.uri, allowAll) : [];
  }
  if (target && !isNode(target) && target.folder instanceof vscode.Uri) return guardiansOf(deps, target.folder, allowAll);
  const all = deps.service.all;
  if (all.length <= 1) return all;
  const items = [...all.map((g) => ({ label: g.folder.name, description: g.folder.uri.fsPath, guardians: [g] })), ...(allowAll ? [{ label: 'All folders', description: '', guardians: all }] : [])];
  const pick = await vscode.window.showQuickPick(items, { placeHolder: 'Which workspace folder?' });
  return pick?.guardians ?? [];
}

/** The incident a command is about: its row, a link's reference, or one picked from the open ones. */
async function incidentOf(deps: Deps, target: Target, open: boolean): Promise<{ guardian: FolderGuardian; incident: TrackedIncident } | undefined> {
  if (isNode(target) && target.kind === 'incident') return { guardian: target.guardian, incident: target.incident };
  const [guardian] = await guardiansOf(deps, target, false);
  const id = target && !isNode(target) && !(target instanceof vscode.Uri) ? target.incident : undefined;
  if (guardian && id !== undefined) {
    const incident = guardian.incident(id);
    return incident ? { guardian, incident } : undefined;
  }
  const candidates = (guardian ? [guardian] : deps.service.all).flatMap((g) => (open ? g.state.incidents : [...g.state.incidents, ...g.state.closedIncidents]).map((incident) => ({ guardian: g, incident })));
  if (candidates.length === 0) {
    void vscode.window.showInformationMessage(open ? 'Loop Guardian: no loop is going on.' : 'Loop Guardian: no loops in this session.');
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    candidates.map((c) => ({ label: c.incident.lead.subject, description: c.guardian.sessionLabel(c.incident.session), detail: c.incident.lead.message, c })),
    { placeHolder: 'Which loop?', matchOnDescription: true, matchOnDetail: true },
  );
  return pick?.c;
}

async function taskOf(deps: Deps, target: Target): Promise<{ guardian: FolderGuardian; task: string } | undefined> {
  if (isNode(target)) {
    if (target.kind === 'task') return { guardian: target.guardian, task: target.blocked.task };
    if (target.kind === 'finding' && target.finding.task) return { guardian: target.guardian, task: target.finding.task };
  }
  const [guardian] = await guardiansOf(deps, target, false);
  if (!guardian) return undefined;
  if (target && !isNode(target) && !(target instanceof vscode.Uri) && target.task) return { guardian, task: target.task };
  const known = new Set([...blockedTasks(guardian).map((b) => b.task), ...guardian.state.findings.flatMap((f) => (f.task ? [f.task] : []))]);
  const task =
    known.size > 0
      ? await vscode.window.showQuickPick([...known], { placeHolder: 'Which task?' })
      : await vscode.window.showInputBox({ prompt: 'Task id', validateInput: (v) => (/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/.test(v) ? undefined : 'letters, digits, ".", "_" and "-"') });
  return task ? { guardian, task } : undefined;
}

function operations(guardian: FolderGuardian): TaskOperations {
  return new TaskOperations(guardian.ws, guardian.guardianConfig ?? defaultConfig(), 'vscode');
}

/** What the STOP_ALL commands confirmed in this session (for the extension's API and its tests). */
export const stopConfirmations: string[] = [];

async function setStopAll(deps: Deps, target: Target, status: StopStatus): Promise<void> {
  if (!trusted()) return;
  for (const g of await guardiansOf(deps, target, true)) {
    const reason = status === 'STOP' ? 'Circuit Break from VS Code' : status === 'PAUSE' ? 'Pause from VS Code' : 'Resume from VS Code';
    await new StopAllFile(g.ws).write(status, reason, 'vscode');
    await new GuardianLog(g.ws).write(status === 'CLEAR' ? 'INFO' : 'WARN', `STOP_ALL set to ${status} from VS Code`);
    deps.log.info(`${g.folder.name}: STOP_ALL set to ${status}`);
    await g.refreshState();
    if (status !== 'CLEAR') confirmStop(g, status);
  }
}

/**
 * Says what STOP or PAUSE reaches: the agents whose hook runs here are held, the others named
 * (watched only, or their hook not running); and that the file, committed, holds teammates' and
 * cloud agents' hooked runs too. With the one click that undoes it.
 */
function confirmStop(g: FolderGuardian, status: 'STOP' | 'PAUSE'): void {
  const agents = g.state.foundAgents;
  const held = agents.filter((a) => a.state === 'enforced' || a.state === 'installed').map((a) => a.label);
  const unreached = agents.filter((a) => a.state !== 'enforced' && a.state !== 'installed' && a.lastWork !== undefined).map((a) => `${a.label} (${a.state === 'not-running' ? 'its hook does not run' : 'no hook'})`);
  const what = status === 'STOP' ? 'every call of a hooked agent is refused' : 'hooked agents start no new subagent or task';
  const words = [
    `${status} written to ${PATHS.stopAll} in ${g.folder.name}: ${what}${held.length > 0 ? ` (${held.join(', ')})` : ''}.`,
    unreached.length > 0 ? `Not reached: ${unreached.join(', ')}.` : '',
    'Committed, the file holds teammates\' and cloud agents\' hooked runs too.',
  ].filter((w) => w !== '');
  const message = words.join(' ');
  stopConfirmations.push(message);
  void vscode.window.showInformationMessage(message, 'Resume (CLEAR)', 'Open STOP_ALL').then((picked) => {
    if (picked === 'Resume (CLEAR)') void vscode.commands.executeCommand(Command.resume, g.folder.uri);
    else if (picked === 'Open STOP_ALL') void vscode.commands.executeCommand(Command.openStopAll, g.folder.uri);
  });
}

/** Turns watching an agent's transcripts on or off in the folder's config.json (the change is then read like any edit of it). */
async function setWatched(deps: Deps, target: Target, enabled: boolean): Promise<boolean | undefined> {
  if (!trusted()) return undefined;
  const [g] = await guardiansOf(deps, target, false);
  if (!g) return undefined;
  const given = agentIdOf(target);
  const choices = g.state.foundAgents.filter((a) => a.watchable && a.watched !== enabled);
  const id = given ?? (await vscode.window.showQuickPick(choices.map((a) => ({ label: a.label, description: `${a.transcripts} session(s) found`, id: a.id })), { placeHolder: enabled ? 'Watch which agent?' : 'Stop watching which agent?' }))?.id;
  if (id === undefined) return undefined;
  await setAgentWatched(g.ws, id, enabled);
  deps.log.info(`${g.folder.name}: ${PATHS.config}: agents.${id}.enabled = ${enabled}`);
  return enabled;
}

async function openFile(uri: vscode.Uri): Promise<void> {
  await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
}

function handlers(deps: Deps): Record<string, (target?: Target) => unknown> {
  return {
    [Command.circuitBreak]: (t) => setStopAll(deps, t, 'STOP'),
    [Command.pause]: (t) => setStopAll(deps, t, 'PAUSE'),
    [Command.resume]: (t) => setStopAll(deps, t, 'CLEAR'),
    [Command.forceEscalate]: async (t) => {
      if (!trusted()) return;
      const picked = await taskOf(deps, t);
      if (!picked) return;
      const r = await operations(picked.guardian).escalate(picked.task, 'Force escalate from VS Code');
      if (r.outcome === 'escalated') void vscode.window.showInformationMessage(`Task ${picked.task} escalated from tier ${r.from} to tier ${r.to}.`);
      else void vscode.window.showWarningMessage(`HUMAN_INTERVENTION_REQUIRED: task ${picked.task} is at tier ${r.tier}.`);
      return r;
    },
    [Command.analyzeTask]: async (t) => {
      const picked = await taskOf(deps, t);
      if (!picked) return;
      // The loops the editor shows are the ones it has: the logs are not read again.
      const analysis = await operations(picked.guardian).analyze(picked.task, picked.guardian.state.findings);
      const doc = await vscode.workspace.openTextDocument({ language: 'json', content: `${JSON.stringify(analysis, null, 2)}\n` });
      await vscode.window.showTextDocument(doc, { preview: true });
      return analysis;
    },
    [Command.unblockTask]: async (t) => {
      if (!trusted()) return;
      const picked = await taskOf(deps, t);
      if (!picked) return;
      const removed = await operations(picked.guardian).cleanup(picked.task);
      await picked.guardian.refreshState();
      void vscode.window.showInformationMessage(removed ? `Task ${picked.task} unblocked.` : `Task ${picked.task} was not in the blocked-task registry.`);
      return removed;
    },
    [Command.scanNow]: () => vscode.window.withProgress({ location: { viewId: 'loopGuardian.findings' }, title: 'Scanning' }, () => deps.service.rescan()),
    [Command.showLog]: () => deps.log.show(),
    [Command.openStopAll]: async (t) => {
      const [g] = await guardiansOf(deps, t, false);
      if (!g) return;
      const uri = vscode.Uri.joinPath(g.folder.uri, PATHS.stopAll);
      if (!g.state.stop.exists) {
        if (!vscode.workspace.isTrusted) return void vscode.window.showInformationMessage(`${PATHS.stopAll} does not exist: every agent runs (CLEAR).`);
        await new StopAllFile(g.ws).write('CLEAR', 'created from VS Code', 'vscode');
      }
      await openFile(uri);
    },
    [Command.openConfig]: async (t) => {
      const [g] = await guardiansOf(deps, t, false);
      if (!g) return;
      const uri = vscode.Uri.joinPath(g.folder.uri, PATHS.config);
      try {
        await vscode.workspace.fs.stat(uri);
      } catch {
        if (!trusted()) return;
        await createDefaultConfig(g.ws);
      }
      await openFile(uri);
    },
    [Command.copyDiagnostics]: async (t) => {
      if (!isNode(t)) return;
      const data = t.kind === 'finding' ? t.finding : t.kind === 'task' ? t.blocked : t.kind === 'incident' ? t.incident : undefined;
      if (data) await vscode.env.clipboard.writeText(JSON.stringify(data, null, 2));
    },
    [Command.openSummary]: async (t) => {
      if (isNode(t) && t.kind === 'task' && t.blocked.entry) await openFile(vscode.Uri.joinPath(t.guardian.folder.uri, t.blocked.entry.summary_file));
    },
    [Command.showIncident]: async (t) => {
      const picked = await incidentOf(deps, t, false);
      if (!picked) return;
      await deps.reveal(picked.guardian, picked.incident);
      return picked.incident.id;
    },
    [Command.muteIncident]: async (t) => {
      const picked = await incidentOf(deps, t, true);
      if (!picked) return;
      const { guardian, incident } = picked;
      const muted = await deps.notifier.mute(guardian, incident.id);
      const text = muted ? `Loop Guardian: no more notifications about "${incident.lead.subject}". It stays in the Loop Guardian view.` : `"${incident.lead.subject}" was already muted.`;
      void vscode.window.showInformationMessage(text, ...(muted ? ['Undo'] : [])).then((choice) => (choice === 'Undo' ? deps.notifier.unmute(guardian, incident.id) : undefined));
      return muted;
    },
    [Command.unmuteIncident]: async (t) => {
      const picked = await incidentOf(deps, t, false);
      if (!picked) return;
      const unmuted = await deps.notifier.unmute(picked.guardian, picked.incident.id);
      void vscode.window.showInformationMessage(unmuted ? `Loop Guardian: notifications about "${picked.incident.lead.subject}" are back on.` : `"${picked.incident.lead.subject}" was not muted.`);
      return unmuted;
    },
    [Command.dismissIncident]: async (t) => {
      const picked = await incidentOf(deps, t, true);
      if (!picked) return;
      return picked.guardian.dismiss(picked.incident.id);
    },
    [Command.dismissAll]: async (t) => {
      const guardians = t === undefined ? deps.service.all : await guardiansOf(deps, t, true);
      return guardians.reduce((n, g) => n + g.dismissAll(), 0);
    },
    [Command.focus]: () => vscode.commands.executeCommand('workbench.view.extension.loopGuardian'),
    [Command.installHook]: async (t) => {
      if (!trusted()) return;
      const [g] = await guardiansOf(deps, t, false);
      if (!g) return;
      const given = agentIdOf(t);
      const id =
        given ??
        (
          await vscode.window.showQuickPick(
            HOOK_AGENTS.map((a) => ({ label: a.label, description: a.hook.registration.settingsFile, agent: a.id })),
            { placeHolder: 'Which agent should run the Loop Guardian hook before and after each tool call?' },
          )
        )?.agent;
      if (id === undefined) return;
      const agent = hookAgent(id);
      if (agent === undefined) throw new Error(`unknown agent ${JSON.stringify(id)}: ${HOOK_AGENTS.map((a) => a.id).join(', ')}`);
      // The per-user launcher starts this extension's CLI; the settings run the launcher, which works
      // on a teammate's machine (a no-op without it) and after the extension updates.
      const launcher = await installLauncher(extensionLauncherTarget(deps.extensionPath));
      if (launcher.changed) deps.log.info(`launcher ${launcher.path} written`);
      const result = await installHook(g.ws, agent, hookCommand(agent.id, agent.hook), windowsCommandFor(agent));
      const changed = [...result.added, ...result.updated];
      await new GuardianLog(g.ws).write('INFO', `hook for ${agent.id} registered from VS Code in ${result.file}: ${changed.join(', ') || 'already there'}`);
      deps.log.info(`${g.folder.name}: ${result.file}: hook for ${agent.id} ${changed.length > 0 ? `on ${changed.join(', ')}` : 'already registered'}`);
      const message = changed.length > 0 ? `${agent.label} now runs the Loop Guardian hook (${result.file}).` : `${result.file} already runs the Loop Guardian hook.`;
      void vscode.window.showInformationMessage(message, 'Open').then((choice) => (choice ? openFile(vscode.Uri.joinPath(g.folder.uri, result.files?.[0] ?? result.file)) : undefined));
      // The walkthrough's step is done by an install, not by opening the picker (a cancelled pick is no install).
      void vscode.commands.executeCommand('setContext', 'loopGuardian.hookInstalled', true);
      await g.lookForAgents();
      return result;
    },
    [Command.watchAgent]: (t) => setWatched(deps, t, true),
    [Command.openWalkthrough]: () => vscode.commands.executeCommand('workbench.action.openWalkthrough', `${deps.extensionId}#loopGuardian.start`, false),
    [Command.unwatchAgent]: (t) => setWatched(deps, t, false),
  };
}

export function registerCommands(deps: Deps): vscode.Disposable[] {
  return Object.entries(handlers(deps)).map(([id, run]) =>
    vscode.commands.registerCommand(id, async (target?: Target) => {
      try {
        return await run(target);
      } catch (err) {
        deps.log.error(`${id}: ${(err as Error).stack ?? String(err)}`);
        void vscode.window.showErrorMessage(`Loop Guardian: ${(err as Error).message}`);
        return undefined;
      }
    }),
  );
}
