#!/usr/bin/env node
// npm start: a demo workspace in which a simulated agent gets stuck, watched by loop-guardian.
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const cli = path.join(root, 'dist', 'cli.js');
// Its own workspace, outside the checkout, never the one `npm start` shows.
const ws = path.join(require('node:os').tmpdir(), 'loop-guardian-demo-cli', 'workspace');
const logs = path.join(ws, '.tmp', 'current', 'logs');

fs.rmSync(ws, { recursive: true, force: true });
fs.mkdirSync(logs, { recursive: true });

const log = path.join(logs, 'agent.jsonl');
const t0 = Date.now();
let n = 0;
const emit = (e) => fs.appendFileSync(log, `${JSON.stringify({ v: 1, ts: new Date(t0 + n++ * 1000).toISOString(), session: 'demo-1', agent: 'coder', ...e })}\n`);

// The agent reads a file, then keeps trying an edit whose search text is no longer there.
emit({ type: 'user', text: 'Fix the off-by-one in src/range.ts' });
emit({ type: 'tool', tool: 'read_file', args: { path: 'src/range.ts' }, ok: true, output: 'export const range = (n) => [...Array(n + 1).keys()];' });
for (let i = 0; i < 3; i++) {
  emit({ type: 'tool', tool: 'apply_code_edit', id: `edit-${i}`, args: { path: 'src/range.ts', search: 'Array(n - 1)', replace: 'Array(n)' } });
  emit({ type: 'tool_result', id: `edit-${i}`, ok: false, error: 'Error: search string not found in file src/range.ts' });
  emit({ type: 'tool', tool: 'run_tests', args: { cmd: 'npm test' }, ok: false, error: '1 failing: range(3) should have 3 items' });
}
emit({ type: 'usage', task: 'fix-range', used: 8600, budget: 10000 });

const history = path.join(logs, 'invocation-history.json');
for (let i = 0; i < 3; i++) {
  execFileSync(process.execPath, [cli, 'record', '--workspace', ws, '--agent', 'bug-fixer', '--config', '{"priority":"critical"}', '--result', 'failed', '--reason', 'Type-check failed'], { stdio: 'ignore' });
}

console.log(`Demo workspace: ${ws}`);
console.log(`Agent log:      ${path.relative(ws, log)}`);
console.log(`History:        ${path.relative(ws, history)}\n`);
const run = (args) => {
  console.log(`$ loop-guardian ${args.join(' ')}`);
  try {
    process.stdout.write(execFileSync(process.execPath, [cli, ...args, '--workspace', ws], { encoding: 'utf8' }));
  } catch (err) {
    process.stdout.write(err.stdout ?? '');
    console.log(`(exit ${err.status})`);
  }
  console.log('');
};
run(['scan']);
run(['check', '--agent', 'bug-fixer', '--config', '{"priority":"critical"}']);
run(['stop', '--reason', 'demo: the agent is looping']);
