import type { Finding } from '../core/finding';
import type { FolderGuardian } from './folderGuardian';
import { evidenceNodes, GuardianTree, type Node } from './treeNodes';

/** Findings: what is being watched, per workspace folder and session, with the active findings. */
export class FindingsTree extends GuardianTree {
  getChildren(node?: Node): Node[] {
    if (!node) {
      const guardians = this.service.all;
      // Nothing watched anywhere: an empty tree lets the welcome view explain what to do.
      if (guardians.every((g) => g.state.files.length <= 1 && g.state.findings.length === 0 && g.state.stop.state.status === 'CLEAR' && g.state.events === 0 && g.state.agents.length === 0)) return [];
      if (guardians.length === 1) return this.folderChildren(guardians[0] as FolderGuardian);
      return guardians.map((guardian) => ({ kind: 'folder', guardian, view: 'findings' }));
    }
    switch (node.kind) {
      case 'folder':
        return this.folderChildren(node.guardian);
      case 'session':
      case 'agent':
        return node.findings.map((finding) => ({ kind: 'finding', guardian: node.guardian, finding }));
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
    if (s.skipped > 0) {
      nodes.push({ kind: 'info', label: `${s.skipped} line${s.skipped === 1 ? '' : 's'} skipped`, description: 'not valid events', icon: 'circle-slash', command: { title: 'Show Log', command: 'loopGuardian.showLog' } });
    }
    // Each agent transcript is a node of its own, with the findings raised in it; the rest go by session.
    const byTranscript = new Map<string, Finding[]>(s.agents.map((a) => [a.file, []]));
    const bySession = new Map<string, Finding[]>();
    for (const f of s.findings) {
      const inTranscript = byTranscript.get(f.at.file);
      if (inTranscript) inTranscript.push(f);
      // Appended in place: copying the list for each finding was quadratic in a session's findings.
      else {
        const inSession = bySession.get(f.session);
        if (inSession) inSession.push(f);
        else bySession.set(f.session, [f]);
      }
    }
    for (const source of s.agents) nodes.push({ kind: 'agent', guardian, source, findings: byTranscript.get(source.file) ?? [] });
    for (const [session, findings] of bySession) nodes.push({ kind: 'session', guardian, session, findings });
    if (bySession.size === 0 && s.agents.length === 0) {
      nodes.push({ kind: 'info', label: 'No loops', description: `${s.events} events in ${s.files.length} log${s.files.length === 1 ? '' : 's'}`, icon: 'pass', tooltip: s.files.join('\n') });
    }
    return nodes;
  }
}
