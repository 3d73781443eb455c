import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { checkSync } from 'recheck';
import * as ts from 'typescript';
import { ROOT } from '../unit/helpers';

/**
 * No regex in src/ runs in super-linear time, on any input: the guardian runs its regexes on text
 * agents write (errors of megabytes), so one that backtracks is a hang an agent can trigger.
 *
 * Checked with `recheck` on every regex literal rather than with eslint-plugin-regexp: the
 * plugin's rules look at one match attempt and at quantifiers reachable from the start, and do not
 * flag /expected .* (got|received)/, the very pattern that took 151 s on a 1 MB error (each
 * "expected" re-scans the rest of the line); recheck analyses the unanchored search and does.
 */

async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const d of await fs.readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) out.push(...(await sourceFiles(p)));
    else if (d.name.endsWith('.ts')) out.push(p);
  }
  return out;
}

/** Every regex literal of a file, with its line, found by the TypeScript parser (not by a regex). */
function regexLiterals(file: string, text: string): Array<{ where: string; source: string; flags: string }> {
  const found: Array<{ where: string; source: string; flags: string }> = [];
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const visit = (node: ts.Node): void => {
    if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
      const literal = node.getText(sf);
      const end = literal.lastIndexOf('/');
      const { line } = sf.getLineAndCharacterOfPosition(node.getStart(sf));
      found.push({ where: `${path.relative(ROOT, file)}:${line + 1}`, source: literal.slice(1, end), flags: literal.slice(end + 1) });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

describe('regexes run in linear time (recheck over every regex literal in src/)', function () {
  this.timeout(120_000);

  it('finds the regexes, and recheck flags the pattern that hung classification', () => {
    const found = regexLiterals('x.ts', 'const a = /expected .* (got|received)/i; const b = "/not a regex/";');
    assert.deepEqual(found.map((r) => [r.source, r.flags]), [['expected .* (got|received)', 'i']]);
    assert.equal(checkSync('expected .* (got|received)', 'i').status, 'vulnerable');
  });

  it('no regex literal in src/ is vulnerable to super-linear backtracking', async () => {
    const literals = [];
    for (const file of await sourceFiles(path.join(ROOT, 'src'))) literals.push(...regexLiterals(file, await fs.readFile(file, 'utf8')));
    assert.ok(literals.length > 50, `only ${literals.length} regex literals found`);
    const bad = literals
      .map((r) => ({ ...r, result: checkSync(r.source, r.flags, { timeout: 10_000 }) }))
      .filter((r) => r.result.status !== 'safe')
      .map((r) => `${r.where}: /${r.source}/${r.flags}: ${r.result.status}${r.result.status === 'vulnerable' ? ` (${r.result.complexity.type}; attack ${r.result.attack.pattern})` : ''}`);
    assert.deepEqual(bad, []);
  });
});
