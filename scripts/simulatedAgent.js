#!/usr/bin/env node
// A small simulated coding agent for the demo: it does some honest work, then gets stuck retrying an
// edit whose search text is gone. Like a well-behaved agent it checks STOP_ALL before each step and
// halts on STOP (and waits on PAUSE). Usage: simulatedAgent.js WORKSPACE [--delay MS]
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const ws = path.resolve(process.argv[2] || '.');
const delayAt = process.argv.indexOf('--delay');
const delay = delayAt > 0 ? Number(process.argv[delayAt + 1]) : 1500;
const log = path.join(ws, '.tmp', 'current', 'logs', 'agent.jsonl');
const stopFile = path.join(ws, '.github', 'guardian', 'STOP_ALL');
fs.mkdirSync(path.dirname(log), { recursive: true });

const session = `demo-${new Date().toISOString().slice(11, 19).replace(/:/g, '')}`;
const emit = (e) => fs.appendFileSync(log, `${JSON.stringify({ v: 1, ts: new Date().toISOString(), session, agent: 'demo-coder', ...e })}\n`);
const stopStatus = () => {
  try {
    return fs.readFileSync(stopFile, 'utf8').split(/\s/)[0].toUpperCase();
  } catch {
    return 'CLEAR';
  }
};

const honest = [
  { type: 'user', text: 'Fix the off-by-one in src/range.ts' },
  { type: 'tool', tool: 'read_file', args: { path: 'src/range.ts' }, ok: true, output: 'export const range = (n) => [...Array(n + 1).keys()];' },
  { type: 'tool', tool: 'run_tests', args: { cmd: 'npm test' }, ok: false, error: '1 failing: range(3) should have 3 items' },
  { type: 'usage', task: 'fix-range', used: 4200, budget: 10000 },
];
const stuck = (i) => [
  { type: 'tool', tool: 'apply_code_edit', id: `edit-${i}`, args: { path: 'src/range.ts', search: 'Array(n - 1)', replace: 'Array(n)' } },
  { type: 'tool_result', id: `edit-${i}`, ok: false, error: 'Error: search string not found in file src/range.ts' },
  { type: 'output', text: 'Let me apply the fix to src/range.ts again.' },
];

let step = 0;
let i = 0;
const queue = [...honest];
const timer = setInterval(() => {
  const status = stopStatus();
  if (status === 'STOP') {
    emit({ type: 'output', text: 'STOP_ALL says STOP: halting.' });
    console.log(`[agent] STOP_ALL is STOP: halting after ${step} steps`);
    clearInterval(timer);
    return;
  }
  if (status === 'PAUSE') return;
  if (queue.length === 0) queue.push(...stuck(i++));
  emit(queue.shift());
  step++;
  if (i > 0 && step % 3 === 0) emit({ type: 'usage', task: 'fix-range', used: Math.min(12000, 4200 + step * 400), budget: 10000 });
}, delay);
process.on('SIGINT', () => process.exit(0));
process.on('SIGTERM', () => process.exit(0));
