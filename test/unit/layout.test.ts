import * as assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { AGENTS, HOOK_AGENTS } from '../../src/agents';
import { HOOKED_AGENTS } from '../../src/agents/hooks';

/**
 * The layers, as the imports draw them: each folder of `src/` may import only from the folders
 * listed for it (and from itself). A violation names the file and the import.
 */
const SRC = path.resolve(__dirname, '../../../src');

const ALLOWED: Readonly<Record<string, readonly string[]>> = {
  core: [],
  agents: ['core'],
  state: ['core', 'agents'],
  watch: ['core', 'agents', 'state'],
  tasks: ['core', 'state', 'watch'],
  hook: ['core', 'agents', 'state', 'watch'],
  cli: ['core', 'agents', 'state', 'watch', 'tasks', 'hook'],
  vscode: ['core', 'agents', 'state', 'watch', 'tasks'],
};

/** Node's modules that reach outside the process: none of them in the pure layers. */
const IO_MODULES = /^(node:)?(fs|fs\/promises|child_process|net|http|https|dgram|worker_threads)$/;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    return d.isDirectory() ? sources(p) : d.name.endsWith('.ts') ? [p] : [];
  });
}

function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?\bfrom\s+['"]([^'"]+)['"]|\b(?:require|import)\(\s*['"]([^'"]+)['"]\s*\)/g)) {
    out.push((m[1] ?? m[2]) as string);
  }
  return out;
}

function layerOf(file: string): string {
  return path.relative(SRC, file).split(path.sep)[0] as string;
}

describe('layout', () => {
  const files = sources(SRC);

  it('each layer imports only from the layers below it', () => {
    const violations: string[] = [];
    for (const file of files) {
      const layer = layerOf(file);
      const allowed = ALLOWED[layer];
      if (allowed === undefined) continue;
      for (const spec of imports(file)) {
        if (spec === 'vscode' && layer !== 'vscode') violations.push(`${path.relative(SRC, file)} imports vscode`);
        if (!spec.startsWith('.')) continue;
        const target = layerOf(path.resolve(path.dirname(file), spec));
        if (target !== layer && !allowed.includes(target)) violations.push(`${path.relative(SRC, file)} imports ${spec} (${layer} -> ${target})`);
      }
    }
    assert.deepEqual(violations, []);
  });

  it('the detection core and the agents do no I/O', () => {
    const violations = files
      .filter((f) => ['core', 'agents'].includes(layerOf(f)))
      .flatMap((f) => imports(f).filter((s) => IO_MODULES.test(s)).map((s) => `${path.relative(SRC, f)} imports ${s}`));
    assert.deepEqual(violations, []);
  });

  it('only the state layer opens the guardian\'s own files for writing', () => {
    const writers = /\b(writeFileAtomic|withFileLock|appendFile|writeFile)\s*\(/;
    const violations = files
      .filter((f) => layerOf(f) !== 'state')
      .filter((f) => writers.test(readFileSync(f, 'utf8')))
      .map((f) => path.relative(SRC, f));
    assert.deepEqual(violations, []);
  });

  it('no file outside src/agents/ names a specific agent', () => {
    const names = AGENTS.flatMap((a) => [a.label, ...[a.id, a.eventAgent].map((id) => `'${id}'`)]);
    const violations = files
      .filter((f) => layerOf(f) !== 'agents')
      .flatMap((f) => {
        const text = readFileSync(f, 'utf8');
        return names.filter((n) => text.includes(n)).map((n) => `${path.relative(SRC, f)} names ${n}`);
      });
    assert.deepEqual(violations, []);
  });

  it("the hook's list of agents (agents/hooks.ts, without their transcript readers) is the registry's: the same agents, order, event names and protocols", () => {
    assert.deepEqual(
      HOOKED_AGENTS.map((a) => [a.id, a.eventAgent]),
      HOOK_AGENTS.map((a) => [a.id, a.eventAgent]),
    );
    HOOKED_AGENTS.forEach((a, i) => assert.equal(a.hook, HOOK_AGENTS[i]?.hook, `${a.id}: the registry's own protocol object`));
  });

  it('every agent lives in its own folder, and the registry lists every folder', () => {
    const folders = readdirSync(path.join(SRC, 'agents'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
    assert.deepEqual([...folders].sort(), AGENTS.map((a) => a.id).sort());
  });
});
