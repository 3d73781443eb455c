import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { LoopGuardianApi } from '../../src/vscode/api';
import { append, folderPath, guardian, label, waitFor, walk } from './util';

describe('Loop Guardian in a real VS Code: several folders', () => {
  let api: LoopGuardianApi;
  const call = { type: 'tool', session: 'b1', tool: 'grep', args: { pattern: 'TODO' } };

  before(async () => {
    api = await guardian();
    await api.idle();
  });

  it('watches each folder on its own, with one root each in the trees', async () => {
    assert.deepEqual(api.folders().map((f) => f.name), ['alpha', 'beta']);
    await append(path.join(folderPath(1), '.tmp', 'current', 'logs', 'agent.jsonl'), [call, call, call]);
    await waitFor('a finding in beta', () => api.folders()[1]?.findings.length);
    assert.equal(api.folders()[0]?.findings.length, 0);
    const roots = (await walk(api.findingsTree)).filter((n) => n.depth === 0);
    assert.deepEqual(roots.map((r) => label(r.item)), ['alpha', 'beta']);
    await waitFor('beta in the status-bar tooltip', () => /beta/.test(api.statusBar().tooltip));
    // Show Details reveals a loop by asking the tree for each row's parent up to the root: a loop's
    // row, and its session's row, hang under their folder's row here.
    const id = api.folders()[1]?.incidents[0]?.id;
    assert.ok(id);
    const rows = await walk(api.findingsTree);
    const loop = rows.findIndex((r) => r.node.kind === 'incident' && r.node.incident.id === id);
    assert.ok(loop >= 0);
    const chain: string[] = [];
    for (let n = api.findingsTree.getParent?.(rows[loop]?.node as (typeof rows)[number]['node']); n; n = api.findingsTree.getParent?.(n)) {
      chain.push((await api.findingsTree.getTreeItem(n)).id ?? '?');
    }
    const under = (depth: number) => rows.slice(0, loop).filter((r) => r.depth === depth).pop()?.item.id;
    assert.deepEqual(chain, [under(1), under(0)], 'the loop, its session, its folder');
    // The view is hidden (the Explorer is shown): Show Details opens it and selects the loop's row there.
    await vscode.commands.executeCommand('workbench.view.explorer');
    assert.equal(await vscode.commands.executeCommand('loopGuardian.showIncident', { folder: 1, incident: id }), id);
    await waitFor('the loop\'s row selected', () => api.view().selectedLoops.includes(id));
  });

  it('follows folders added and removed at run time', async () => {
    const gamma = path.join(path.dirname(folderPath(0)), 'gamma');
    assert.ok(vscode.workspace.updateWorkspaceFolders(2, 0, { uri: vscode.Uri.file(gamma) }));
    await waitFor('gamma watched', () => api.folders().some((f) => f.name === 'gamma'));
    await append(path.join(gamma, '.tmp', 'run', 'logs', 'late.jsonl'), [call, call, call].map((c) => ({ ...c, session: 'g1' })));
    await waitFor('a finding in gamma', () => api.folders().find((f) => f.name === 'gamma')?.findings.length);
    assert.ok(vscode.workspace.updateWorkspaceFolders(0, 1));
    await waitFor('alpha gone', () => !api.folders().some((f) => f.name === 'alpha'));
    assert.deepEqual(api.folders().map((f) => f.name), ['beta', 'gamma']);
  });
});
