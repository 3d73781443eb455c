import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { LoopGuardianApi } from '../../src/vscode/api';
import { append, exists, folderPath, guardian, waitFor } from './util';

describe('Loop Guardian in a real VS Code: an untrusted folder', () => {
  let api: LoopGuardianApi;

  before(async () => {
    api = await guardian();
    await api.idle();
  });

  it('runs in an untrusted workspace', () => {
    assert.equal(vscode.workspace.isTrusted, false);
  });

  it('watches and shows', async () => {
    const call = { type: 'tool', session: 'u', tool: 'ls', args: {}, ok: true, output: 'a.ts' };
    await append(path.join(folderPath(), '.tmp', 'current', 'logs', 'agent.jsonl'), [call, call, call]);
    await waitFor('a loop', () => /1 loop/.test(api.statusBar().text));
  });

  it('writes nothing: no STOP_ALL, no config, no task state', async () => {
    const root = folderPath();
    await vscode.commands.executeCommand('loopGuardian.circuitBreak');
    await vscode.commands.executeCommand('loopGuardian.openConfig');
    await vscode.commands.executeCommand('loopGuardian.forceEscalate', { task: 't1' });
    assert.equal(await exists(path.join(root, '.github')), false);
    assert.equal(await exists(path.join(root, '.tmp', 'guardian')), false);
  });
});
