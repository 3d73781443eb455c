import * as vscode from 'vscode';
import type { Finding } from '../core/finding';
import type { FolderGuardian } from './folderGuardian';
import { evidenceNodes, GuardianTree, type BlockedTaskView, type Node } from './treeNodes';

/** The tasks a folder has blocked: the registry's, and those that active findings block. */
export function blockedTasks(guardian: FolderGuardian): BlockedTaskView[] {
  const s = guardian.state;
  const byTask = new Map<string, Finding[]>();
  // Appended in place: copying the list for each finding was quadratic in a task's findings.
  for (const f of s.findings) {
    if (f.task === undefined) continue;
    const forTask = byTask.get(f.task);
    if (forTask) forTask.push(f);
    else byTask.set(f.task, [f]);
  }
  const views: BlockedTaskView[] = s.blocked.map((entry) => ({ task: entry.task_id, entry, findings: byTask.get(entry.task_id) ?? [] }));
  for (const [task, findings] of byTask) {
    if (s.blocked.some((b) => b.task_id === task)) continue;
    if (findings.some((f) => f.status === 'BLOCKED')) views.push({ task, findings });
  }
  return views;
}

/** Blocked Tasks: each task's pattern, suspected cause, count, last error, suggested action and evidence. */
export class BlockedTasksTree extends GuardianTree {
  getChildren(node?: Node): Node[] {
    if (!node) {
      const guardians = this.service.all;
      if (guardians.every((g) => blockedTasks(g).length === 0)) return [];
      if (guardians.length === 1) return this.tasks(guardians[0] as FolderGuardian);
      return guardians.map((guardian) => ({ kind: 'folder', guardian, view: 'blocked' }));
    }
    if (node.kind === 'folder') return this.tasks(node.guardian);
    if (node.kind === 'task') return this.details(node.guardian, node.blocked);
    return [];
  }

  private tasks(guardian: FolderGuardian): Node[] {
    return blockedTasks(guardian).map((blocked) => ({ kind: 'task', guardian, blocked }));
  }

  private details(guardian: FolderGuardian, b: BlockedTaskView): Node[] {
    const info = (label: string, description: string, icon: string): Node => ({ kind: 'info', label, description, icon, tooltip: `${label}: ${description}` });
    const nodes: Node[] = [];
    const top = b.findings[0];
    if (b.entry) {
      nodes.push(info('Pattern', b.entry.pattern, 'symbol-event'));
      nodes.push(info('Suspected cause', b.entry.reason, 'question'));
      nodes.push(info('Count', `${b.entry.attempts} attempts at tier ${b.entry.tier}${b.entry.repeated_error_count > 1 ? `, same error ${b.entry.repeated_error_count} times` : ''}`, 'history'));
      nodes.push(info('Last error', b.entry.latest_error ?? '(none recorded)', 'error'));
      nodes.push(info('Suggested action', b.entry.suggested_action, 'lightbulb'));
      nodes.push({
        kind: 'info',
        label: 'Summary',
        description: b.entry.summary_file,
        icon: 'file-text',
        command: { title: 'Open Summary', command: 'vscode.open', arguments: [vscode.Uri.joinPath(guardian.folder.uri, b.entry.summary_file)] },
      });
    } else if (top) {
      nodes.push(info('Pattern', b.findings.map((f) => f.signal).join(', '), 'symbol-event'));
      nodes.push(info('Suspected cause', top.message, 'question'));
      nodes.push(info('Count', `${top.count} of ${top.threshold}`, 'history'));
      nodes.push(info('Suggested action', top.recommendation, 'lightbulb'));
    }
    return [...nodes, ...evidenceNodes(guardian, b.findings)];
  }
}
