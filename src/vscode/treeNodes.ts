import * as path from 'node:path';
import * as vscode from 'vscode';
import type { BlockedTask } from '../core/blockedSummary';
import type { EventRef } from '../core/events';
import type { Finding } from '../core/finding';
import type { TrackedIncident } from '../core/incidentBook';
import { ENFORCEMENT_WORDS, type AgentEnforcement } from '../watch/enforcement';
import { times } from '../core/plainWords';
import { outcomeWords, type HookOutcome } from '../state/hookOutcomes';
import type { AgentSource } from '../watch/workspaceMonitor';
import type { FolderGuardian } from './folderGuardian';
import type { GuardianService } from './guardianService';

/** A task the sidebar lists as blocked: registered by a circuit break, or blocked by a finding. */
export interface BlockedTaskView {
  readonly task: string;
  readonly entry?: BlockedTask;
  readonly findings: readonly Finding[];
}

export type Node =
  | { readonly kind: 'folder'; readonly guardian: FolderGuardian; readonly view: 'findings' | 'blocked' }
  | { readonly kind: 'session'; readonly guardian: FolderGuardian; readonly session: string; readonly incidents: readonly TrackedIncident[] }
  | { readonly kind: 'agent'; readonly guardian: FolderGuardian; readonly source: AgentSource; readonly incidents: readonly TrackedIncident[] }
  | { readonly kind: 'incident'; readonly guardian: FolderGuardian; readonly incident: TrackedIncident; readonly muted: boolean }
  | { readonly kind: 'closed'; readonly guardian: FolderGuardian; readonly incidents: readonly TrackedIncident[] }
  | { readonly kind: 'foundAgents'; readonly guardian: FolderGuardian; readonly agents: readonly AgentEnforcement[] }
  | { readonly kind: 'foundAgent'; readonly guardian: FolderGuardian; readonly agent: AgentEnforcement }
  | { readonly kind: 'finding'; readonly guardian: FolderGuardian; readonly finding: Finding }
  | { readonly kind: 'task'; readonly guardian: FolderGuardian; readonly blocked: BlockedTaskView }
  | { readonly kind: 'evidence'; readonly guardian: FolderGuardian; readonly ref: EventRef; readonly signal?: string }
  | { readonly kind: 'info'; readonly label: string; readonly description?: string; readonly tooltip?: string; readonly icon?: string; readonly command?: vscode.Command; readonly contextValue?: string };

const ACTION_ICON: Record<Finding['action'], [string, string]> = {
  halt: ['error', 'errorForeground'],
  escalate: ['arrow-up', 'editorWarning.foreground'],
  warn: ['warning', 'editorWarning.foreground'],
  continue: ['info', 'editorInfo.foreground'],
};

/** A log's URI: workspace logs are named relative to the folder, agents' transcripts absolutely. */
export function logUri(guardian: FolderGuardian, file: string): vscode.Uri {
  return path.isAbsolute(file) ? vscode.Uri.file(file) : vscode.Uri.joinPath(guardian.folder.uri, file);
}

export function openAt(guardian: FolderGuardian, ref: EventRef): vscode.Command {
  const uri = logUri(guardian, ref.file);
  const line = Math.max(0, ref.line - 1);
  return { title: 'Open', command: 'vscode.open', arguments: [uri, { selection: new vscode.Range(line, 0, line, 0), preview: true }] };
}

export function toTreeItem(node: Node): vscode.TreeItem {
  switch (node.kind) {
    case 'folder': {
      const item = new vscode.TreeItem(node.guardian.folder.name, vscode.TreeItemCollapsibleState.Expanded);
      item.iconPath = vscode.ThemeIcon.Folder;
      item.resourceUri = node.guardian.folder.uri;
      item.id = `${node.view}:${node.guardian.folder.uri.toString()}`;
      item.contextValue = 'folder';
      return item;
    }
    case 'session': {
      const item = new vscode.TreeItem(node.guardian.sessionLabel(node.session), vscode.TreeItemCollapsibleState.Expanded);
      item.description = loops(node.incidents.length);
      item.tooltip = `session ${node.session}`;
      item.iconPath = new vscode.ThemeIcon('pulse');
      item.id = `session:${node.guardian.folder.uri.toString()}:${node.session}`;
      item.contextValue = 'session';
      return item;
    }
    case 'agent': {
      const a = node.source;
      const halts = node.incidents.filter((i) => i.action === 'halt').length;
      // Named as every session is (the agent, when it started, its id), whatever the transcript holds: one session, several (a resumed conversation), or none yet (its file's name is the id).
      const first = a.sessions[0] ?? path.basename(a.file).replace(/\.[^.]*$/, '');
      const label = `${node.guardian.sessionLabel(first, a.label)}${a.sessions.length > 1 ? ` (+${a.sessions.length - 1} more)` : ''}`;
      const item = new vscode.TreeItem(label, node.incidents.length > 0 ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None);
      item.description = [`${a.events} event${a.events === 1 ? '' : 's'}`, node.incidents.length > 0 ? loops(node.incidents.length) : 'no loops', a.lastTs ? `last ${a.lastTs.slice(11, 19)}` : ''].filter(Boolean).join(' · ');
      item.iconPath = new vscode.ThemeIcon(halts > 0 ? 'error' : 'hubot', halts > 0 ? new vscode.ThemeColor('errorForeground') : undefined);
      item.tooltip = `${a.label} transcript\n${a.file}\nsession ${a.sessions.join(', ') || '(none yet)'}`;
      item.resourceUri = vscode.Uri.file(a.file);
      item.id = `agent:${node.guardian.folder.uri.toString()}:${a.file}`;
      item.contextValue = 'agentSession';
      item.command = { title: 'Open Transcript', command: 'vscode.open', arguments: [vscode.Uri.file(a.file), { preview: true }] };
      return item;
    }
    case 'incident': {
      const i = node.incident;
      // Paths in the workspace as the person sees them in the Explorer: relative, so the label survives the sidebar's width.
      const item = new vscode.TreeItem(i.lead.subject.split(`${node.guardian.ws.root}/`).join(''), vscode.TreeItemCollapsibleState.Collapsed);
      const over = i.state === 'closed' ? (i.end === 'dismissed' ? 'dismissed' : i.end === 'idle' ? 'over: idle' : 'over: the agent moved on') : undefined;
      // What the hook did comes first: a loop it refused (and whose run it ended) is handled, not an alarm.
      const handled = node.guardian.handledBy(i);
      const outcome = handled ?? node.guardian.outcomeOf(i);
      const agentLabel = node.guardian.agentOfSession(i.session)?.label ?? 'the agent';
      const hookSaid = handled ? outcomeWords(handled, agentLabel) : outcome && outcome.refused > 0 ? `Refused ${outcome.refused} call${outcome.refused === 1 ? '' : 's'}, but calls ran after` : undefined;
      // A budget's count is tokens, not repetitions: its subject says how much is used.
      item.description = [handled ? 'Handled' : ACTION_WORD[i.action], i.lead.signal === 'budget' ? undefined : times(i.count), i.findings.length > 1 ? `${i.findings.length} signals` : undefined, handled ? shortOutcome(handled) : undefined, over, node.muted ? 'muted' : undefined].filter(Boolean).join(' · ');
      const [icon, color] = i.state === 'closed' ? ['pass', 'disabledForeground'] : handled ? ['shield', 'testing.iconPassed'] : ACTION_ICON[i.action];
      item.iconPath = new vscode.ThemeIcon(icon, new vscode.ThemeColor(color));
      const md = new vscode.MarkdownString();
      md.appendMarkdown(`**${handled ? 'Handled by the hook' : ACTION_WORD[i.action]}**${over ? ` (${over})` : ''}\n\n`);
      if (hookSaid) md.appendText(`${hookSaid}.\n\n`);
      md.appendText(`${i.lead.message}\n\n→ ${i.lead.recommendation}`);
      item.tooltip = md;
      item.id = incidentItemId(node.guardian, i.id);
      item.contextValue = `incident.${i.state}${handled ? '.handled' : ''}${node.muted ? '.muted' : ''}`;
      const last = i.evidence[i.evidence.length - 1];
      if (last) item.command = openAt(node.guardian, last);
      return item;
    }
    case 'closed': {
      const item = new vscode.TreeItem('Over', vscode.TreeItemCollapsibleState.Collapsed);
      item.description = `${loops(node.incidents.length)} this session`;
      item.tooltip = 'Loops that ended (the agent moved on, or nothing happened for a while) or that you dismissed. Nothing is lost: they stay here until VS Code closes.';
      item.iconPath = new vscode.ThemeIcon('history');
      item.id = `closed:${node.guardian.folder.uri.toString()}`;
      item.contextValue = 'closedIncidents';
      return item;
    }
    case 'foundAgents': {
      const unwatched = node.agents.filter((a) => (a.watchable && !a.watched) || (a.hookFile !== undefined && !a.hooked)).length;
      const item = new vscode.TreeItem('Agents in this folder', unwatched > 0 ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed);
      item.description = `${node.agents.length} found`;
      item.tooltip = 'The agents that have worked here: their transcripts name this folder, or their hook settings are in it. Watch one to see its loops; install its hook to let the guardian stop them.';
      item.iconPath = new vscode.ThemeIcon('hubot');
      item.id = `foundAgents:${node.guardian.folder.uri.toString()}`;
      item.contextValue = 'foundAgents';
      return item;
    }
    case 'foundAgent': {
      const a = node.agent;
      const item = new vscode.TreeItem(a.label, vscode.TreeItemCollapsibleState.None);
      const sessions = a.transcripts > 0 ? `${a.transcripts} session${a.transcripts === 1 ? '' : 's'}` : undefined;
      const watching = a.watchable ? (a.watched ? 'watched' : 'not watched') : undefined;
      const hook = a.hookFile === undefined ? undefined : !a.hooked ? 'no hook' : a.state === 'enforced' ? 'hook enforced' : a.state === 'not-running' ? 'hook installed but not running' : a.state === 'unseen' ? 'hook runs, a loop went unseen' : 'hook installed';
      item.description = [sessions, watching, hook].filter(Boolean).join(' · ');
      item.tooltip = [
        `${a.label}${sessions ? `: ${sessions} found for this folder` : ''}: ${ENFORCEMENT_WORDS[a.state]}.`,
        ...a.problems.map((p) => `${p.cause}. Fix: ${p.fix}.`),
        a.watchable ? (a.watched ? 'Its transcripts are watched (agents.' + a.id + ' in .github/guardian/config.json).' : 'Watch: read its transcripts and show its loops.') : undefined,
        a.hookFile !== undefined ? (a.hooked ? `Its hook runs Loop Guardian (${a.hookFile}).` : `Install Hook: let Loop Guardian refuse its looping calls (${a.hookFile}).`) : undefined,
      ]
        .filter(Boolean)
        .join('\n');
      item.iconPath =
        a.state === 'not-running' || a.state === 'unseen'
          ? new vscode.ThemeIcon('warning', new vscode.ThemeColor('problemsWarningIcon.foreground'))
          : new vscode.ThemeIcon(a.state === 'enforced' || a.state === 'installed' ? 'pass' : a.watched ? 'eye' : 'circle-large-outline');
      item.id = `foundAgent:${node.guardian.folder.uri.toString()}:${a.id}`;
      item.contextValue = ['foundAgent', a.watchable ? (a.watched ? 'watched' : 'watchable') : '', a.hookFile !== undefined && !a.hooked ? 'hookable' : ''].filter(Boolean).join('.');
      return item;
    }
    case 'finding': {
      const f = node.finding;
      // Plain words first (the signal's id is in the tooltip); the count, not the incident's sentence again.
      const item = new vscode.TreeItem(signalWords(f.signal), vscode.TreeItemCollapsibleState.Collapsed);
      item.description = f.signal === 'budget' ? undefined : times(f.count);
      const [icon, color] = ACTION_ICON[f.action];
      item.iconPath = new vscode.ThemeIcon(icon, new vscode.ThemeColor(color));
      const md = new vscode.MarkdownString();
      md.appendMarkdown(`**${f.action.toUpperCase()}** \`${f.signal}\`${f.status ? ` → ${f.status}` : ''}\n\n`);
      md.appendText(`${f.message}\n\n→ ${f.recommendation}`);
      item.tooltip = md;
      item.id = `finding:${node.guardian.folder.uri.toString()}:${f.episode}`;
      item.contextValue = f.task ? 'finding.task' : 'finding';
      item.command = openAt(node.guardian, f.at);
      return item;
    }
    case 'task': {
      const b = node.blocked;
      const item = new vscode.TreeItem(b.task, vscode.TreeItemCollapsibleState.Collapsed);
      item.description = b.entry ? `${b.entry.pattern} · ${b.entry.attempts} attempts · tier ${b.entry.tier}` : b.findings.map((f) => f.signal).join(', ');
      item.iconPath = new vscode.ThemeIcon('circle-slash', new vscode.ThemeColor('errorForeground'));
      item.tooltip = b.entry ? `${b.entry.reason}\n\n${b.entry.suggested_action}` : b.findings[0]?.message;
      item.id = `task:${node.guardian.folder.uri.toString()}:${b.task}`;
      item.contextValue = b.entry ? 'blockedTask.summary' : 'blockedTask.finding';
      return item;
    }
    case 'evidence': {
      // The line number first: what a narrow sidebar cuts is the end of a label.
      const item = new vscode.TreeItem(`line ${node.ref.line} · ${path.basename(node.ref.file)}`, vscode.TreeItemCollapsibleState.None);
      item.description = path.dirname(node.ref.file) === '.' ? undefined : path.dirname(node.ref.file);
      item.iconPath = new vscode.ThemeIcon('debug-stackframe');
      item.command = openAt(node.guardian, node.ref);
      item.contextValue = 'evidence';
      item.tooltip = `Open ${node.ref.file} at line ${node.ref.line}`;
      return item;
    }
    case 'info': {
      const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
      if (node.description !== undefined) item.description = node.description;
      if (node.tooltip !== undefined) item.tooltip = node.tooltip;
      if (node.icon !== undefined) item.iconPath = new vscode.ThemeIcon(node.icon);
      if (node.command !== undefined) item.command = node.command;
      item.contextValue = node.contextValue ?? 'info';
      return item;
    }
  }
}

/** The signals in plain words (their ids are the configuration's). */
const SIGNAL_WORDS: Record<string, string> = {
  'repeated-invocation': 'The same command, repeated',
  'identical-calls': 'The same call, repeated',
  'repeated-error': 'The same error, repeated',
  'failing-call': 'The same failing call',
  'windowed-repeat': 'Repeated within a short span',
  cycle: 'A cycle of calls',
  'identical-output': 'The same output again',
  'retry-exhaustion': 'Retries used up',
  oscillation: 'Going back and forth',
  'stuck-tier': 'Stuck at one tier',
  'quality-gate-loop': 'A quality gate failing again',
  budget: 'Token budget',
  'repeated-prompt': 'The same prompt again',
  'api-error-storm': 'API errors, one after another',
  're-delegation': 'The same task delegated again',
};

export function signalWords(signal: string): string {
  return SIGNAL_WORDS[signal] ?? signal.replace(/-/g, ' ').replace(/^./, (c) => c.toUpperCase());
}

/** The hook's outcome in a few words, for a row's description. */
function shortOutcome(o: HookOutcome): string {
  return `refused ${o.refused}${o.ended ? ', run ended' : ''}`;
}

const ACTION_WORD: Record<Finding['action'], string> = { halt: 'Loop', escalate: 'Escalate', warn: 'Possible loop', continue: 'Note' };

function loops(n: number): string {
  return `${n} loop${n === 1 ? '' : 's'}`;
}

/** The tree item id of an incident: one per folder and incident, open or closed. */
function incidentItemId(guardian: FolderGuardian, incident: string): string {
  return `incident:${guardian.folder.uri.toString()}:${incident}`;
}

/** The evidence of a finding as nodes, newest last. */
export function evidenceNodes(guardian: FolderGuardian, findings: readonly Finding[]): Node[] {
  const seen = new Set<string>();
  const nodes: Node[] = [];
  for (const f of findings) {
    for (const ref of f.evidence) {
      const key = `${ref.file}:${ref.line}`;
      if (seen.has(key)) continue;
      seen.add(key);
      nodes.push({ kind: 'evidence', guardian, ref, signal: f.signal });
    }
  }
  return nodes;
}

/** A view over the guardians' state: redrawn whenever it changes. */
export abstract class GuardianTree implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly subscription: vscode.Disposable;

  constructor(protected readonly service: GuardianService) {
    this.subscription = service.onDidChange(() => this.emitter.fire(undefined));
  }

  abstract getChildren(node?: Node): Node[];

  getTreeItem(node: Node): vscode.TreeItem {
    return toTreeItem(node);
  }

  getParent(_node: Node): Node | undefined {
    return undefined;
  }

  /** Draws the whole view again (what it shows changed outside the guardians' state). */
  protected redraw(): void {
    this.emitter.fire(undefined);
  }

  dispose(): void {
    this.subscription.dispose();
    this.emitter.dispose();
  }
}
