import { unreadAgents } from '../watch/foundAgents';
import * as vscode from 'vscode';
import type { TrackedIncident } from '../core/incidentBook';
import type { FolderGuardian } from './folderGuardian';
import type { FindingNotifier } from './notifier';
import type { GuardianService } from './guardianService';
import { evidenceNodes, GuardianTree, type Node } from './treeNodes';

/** The view's id (package.json contributes.views). */
export const FINDINGS_VIEW = 'loopGuardian.findings';
/** How long Show Details waits for a hidden view to be shown before it reveals the row anyway. */
const SHOW_TIMEOUT_MS = 5_000;

/**
 * Findings: what is being watched, per workspace folder and session, with one row per loop
 * (incident) and its reasons beneath; the loops that are over stay under their own group.
 */
export class FindingsTree extends GuardianTree {
  private readonly mutes: vscode.Disposable;

  constructor(service: GuardianService, private readonly notifier: FindingNotifier) {
    super(service);
    this.mutes = notifier.onDidChangeMutes(() => this.redraw());
  }

  override dispose(): void {
    this.mutes.dispose();
    super.dispose();
  }

  getChildren(node?: Node): Node[] {
    if (!node) {
      const guardians = this.service.all;
      // Nothing watched anywhere: an empty tree lets the welcome view explain what to do.
      if (guardians.every((g) => isEmpty(g))) return [];
      if (guardians.length === 1) return this.folderChildren(guardians[0] as FolderGuardian);
      return guardians.map((guardian) => ({ kind: 'folder', guardian, view: 'findings' }));
    }
    switch (node.kind) {
      case 'folder':
        return this.folderChildren(node.guardian);
      case 'session':
      case 'agent':
      case 'closed':
        return node.incidents.map((incident) => this.incidentNode(node.guardian, incident));
      case 'foundAgents':
        return node.agents.map((agent): Node => ({ kind: 'foundAgent', guardian: node.guardian, agent }));
      case 'incident': {
        const i = node.incident;
        return [
          { kind: 'info', label: i.lead.message, icon: 'comment', tooltip: i.lead.message },
          { kind: 'info', label: i.lead.recommendation, icon: 'lightbulb', tooltip: i.lead.recommendation },
          ...i.findings.map((finding): Node => ({ kind: 'finding', guardian: node.guardian, finding })),
        ];
      }
      case 'finding':
        return [
          { kind: 'info', label: node.finding.message, icon: 'comment', tooltip: node.finding.message },
          { kind: 'info', label: node.finding.recommendation, icon: 'lightbulb', tooltip: node.finding.recommendation },
          ...evidenceNodes(node.guardian, [node.finding]),
        ];
      default:
        return [];
    }
  }

  /** The node that holds an incident's row, for revealing it (Show Details). */
  override getParent(node: Node): Node | undefined {
    if (node.kind === 'incident') {
      const id = node.incident.id;
      return this.folderChildren(node.guardian).find((h) => (h.kind === 'session' || h.kind === 'agent' || h.kind === 'closed') && h.incidents.some((i) => i.id === id));
    }
    // With several folders, a folder's groups hang under its own row (see getChildren).
    if ((node.kind === 'session' || node.kind === 'agent' || node.kind === 'closed') && this.service.all.length > 1) return { kind: 'folder', guardian: node.guardian, view: 'findings' };
    return undefined;
  }

  /** An incident's row, found by its id, open or over. */
  incidentNode(guardian: FolderGuardian, incident: TrackedIncident): Node {
    return { kind: 'incident', guardian, incident, muted: this.notifier.isIncidentMuted(guardian, incident.id) };
  }

  /** Shows an incident's row in the view, selected and expanded. */
  async reveal(view: vscode.TreeView<Node>, guardian: FolderGuardian, incident: TrackedIncident): Promise<void> {
    if (!view.visible) await this.open(view);
    await view.reveal(this.incidentNode(guardian, incident), { select: true, focus: true, expand: true });
  }

  /**
   * Opens the hidden view and has it drawn again before a row is revealed in it. A hidden view
   * puts off the refreshes it is asked for until it is shown; revealing a row opens it, and the
   * workbench then looks the row up while the view's first load, and the refresh it put off, are
   * still replacing its rows: VS Code 1.139 fails there with "TreeError [...] Data tree node not
   * found" (workbench/api/browser/mainThreadTreeViews.ts reveal: the parents are expanded and the
   * row is looked up without waiting for a refresh under way; browser/parts/views/treeView.ts
   * setVisibility runs the put-off refresh without waiting for it). A refresh asked for once the
   * view is shown is one the extension host waits for before it reveals (extHostTreeViews.ts
   * reveal waits for its refresh promise, which waits for the workbench's refresh of a visible
   * view), so the row is looked up in the rows the view shows.
   */
  private async open(view: vscode.TreeView<Node>): Promise<void> {
    const shown = new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        listener.dispose();
        resolve();
      };
      const listener = view.onDidChangeVisibility((e) => (e.visible ? done() : undefined));
      // Whatever keeps it hidden (no window, a layout that has no room for it), the reveal still runs.
      const timer = setTimeout(done, SHOW_TIMEOUT_MS);
    });
    await vscode.commands.executeCommand(`${FINDINGS_VIEW}.focus`);
    await shown;
    this.redraw();
  }

  private folderChildren(guardian: FolderGuardian): Node[] {
    const s = guardian.state;
    const nodes: Node[] = [];
    if (s.stop.state.status !== 'CLEAR') {
      nodes.push({
        kind: 'info',
        label: `STOP_ALL: ${s.stop.state.status}`,
        description: s.stop.state.reason ?? s.stop.state.timestamp ?? '',
        icon: s.stop.state.status === 'STOP' ? 'debug-stop' : 'debug-pause',
        command: { title: 'Open STOP_ALL', command: 'loopGuardian.openStopAll', arguments: [guardian.folder.uri] },
        contextValue: 'stopAll',
      });
    }
    for (const p of s.problems) nodes.push({ kind: 'info', label: p, icon: 'alert', tooltip: p });
    if (s.foundAgents.length > 0) nodes.push({ kind: 'foundAgents', guardian, agents: s.foundAgents });
    if (s.skipped > 0) {
      nodes.push({ kind: 'info', label: `${s.skipped} line${s.skipped === 1 ? '' : 's'} skipped`, description: 'not valid events', icon: 'circle-slash', command: { title: 'Show Log', command: 'loopGuardian.showLog' } });
    }
    // Each agent transcript is a node of its own, with the loops whose evidence is in it; the rest go by session.
    // A hooked session's transcript adds only the calls its hook never saw: the session is one row, by its hook log.
    const shown = s.agents.filter((a) => !a.hooked);
    const byTranscript = new Map<string, TrackedIncident[]>(shown.map((a) => [a.file, []]));
    const bySession = new Map<string, TrackedIncident[]>();
    for (const i of s.incidents) {
      const file = i.evidence[0]?.file ?? i.lead.at.file;
      const inTranscript = byTranscript.get(file);
      if (inTranscript) inTranscript.push(i);
      else {
        const inSession = bySession.get(i.session);
        if (inSession) inSession.push(i);
        else bySession.set(i.session, [i]);
      }
    }
    // Newest first: the session whose loop last grew on top (sessions without a loop keep their order, after them).
    const latest = (incidents: readonly TrackedIncident[]) => incidents.reduce((m, i) => Math.max(m, i.changedAt), 0);
    const agents = shown.map((source) => ({ source, incidents: byTranscript.get(source.file) ?? [] })).sort((a, b) => latest(b.incidents) - latest(a.incidents));
    for (const { source, incidents } of agents) nodes.push({ kind: 'agent', guardian, source, incidents });
    for (const [session, incidents] of [...bySession].sort((a, b) => latest(b[1]) - latest(a[1]))) nodes.push({ kind: 'session', guardian, session, incidents });
    if (bySession.size === 0 && shown.length === 0) {
      // "No loops" is said only of what was read: an agent's sessions nobody reads (not watched,
      // not hooked) may hold one, and the row says so instead, with the click that reads them.
      const { agents: unread, sessions } = unreadAgents(s.foundAgents);
      if (unread.length > 0) {
        const [first] = unread;
        nodes.push({
          kind: 'info',
          label: 'Not read yet',
          description: `${unread.map((a) => a.label).join(', ')}: ${sessions} session${sessions === 1 ? '' : 's'} nobody watches`,
          icon: 'eye-closed',
          tooltip: `Loop Guardian has not read ${unread.map((a) => `${a.label}'s ${a.transcripts} session${a.transcripts === 1 ? '' : 's'}`).join(', ')}: they may hold a loop. Click to watch ${first?.label}'s transcripts, or install its hook.`,
          ...(first ? { command: { command: 'loopGuardian.watchAgent', title: 'Watch', arguments: [{ folder: guardian.folder.uri, agent: first.id }] } } : {}),
        });
      } else {
        nodes.push({ kind: 'info', label: 'No loops', description: `${s.events} events in ${s.files.length} log${s.files.length === 1 ? '' : 's'}`, icon: 'pass', tooltip: s.files.join('\n') });
      }
    }
    if (s.closedIncidents.length > 0) nodes.push({ kind: 'closed', guardian, incidents: s.closedIncidents });
    return nodes;
  }
}

function isEmpty(g: FolderGuardian): boolean {
  const s = g.state;
  return s.files.length === 0 && s.foundAgents.length === 0 && s.incidents.length === 0 && s.closedIncidents.length === 0 && s.stop.state.status === 'CLEAR' && s.events === 0 && s.agents.length === 0;
}
