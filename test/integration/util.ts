import { appendFileSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { LoopGuardianApi } from '../../src/vscode/api';
import type { Node } from '../../src/vscode/treeNodes';

/** A line of the tests' own output (a measured figure): printed by the runner with the results. */
export function note(text: string): void {
  const report = process.env.LOOP_GUARDIAN_REPORT;
  if (report) appendFileSync(report, `${text}\n`);
  else console.log(text);
}

export const EXTENSION_ID = 'loop-guardian.agent-loop-guardian';

export async function guardian(): Promise<LoopGuardianApi> {
  const ext = vscode.extensions.getExtension<LoopGuardianApi>(EXTENSION_ID);
  if (!ext) throw new Error(`${EXTENSION_ID} is not installed`);
  return ext.isActive ? ext.exports : ext.activate();
}

/** Polls until `probe` returns something truthy; fails with what it was waiting for. */
export async function waitFor<T>(what: string, probe: () => T | undefined | null | false | Promise<T | undefined | null | false>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export function folderPath(index = 0): string {
  const f = vscode.workspace.workspaceFolders?.[index];
  if (!f) throw new Error(`no workspace folder ${index}`);
  return f.uri.fsPath;
}

export async function append(file: string, events: readonly Record<string, unknown>[], raw = ''): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.appendFile(file, raw + events.map((e) => `${JSON.stringify({ v: 1, ...e })}\n`).join(''));
}

export async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}

/** Every node of a tree, depth first, with its tree item. */
export async function walk(provider: vscode.TreeDataProvider<Node>, node?: Node, depth = 0): Promise<{ node: Node; item: vscode.TreeItem; depth: number }[]> {
  const out: { node: Node; item: vscode.TreeItem; depth: number }[] = [];
  for (const child of (await provider.getChildren(node)) ?? []) {
    out.push({ node: child, item: await provider.getTreeItem(child), depth });
    out.push(...(await walk(provider, child, depth + 1)));
  }
  return out;
}

export function label(item: vscode.TreeItem): string {
  return typeof item.label === 'string' ? item.label : (item.label?.label ?? '');
}
