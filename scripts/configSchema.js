#!/usr/bin/env node
// Writes media/config.schema.json, the JSON schema VS Code validates `.github/guardian/config.json`
// with (IntelliSense, hovers, a wrong threshold underlined): made from the configuration's own zod
// schema (src/core/configSchema.ts, compiled in out/), each signal described by its row of
// docs/configuration.md's table. `--check` says whether the committed file is up to date (a unit
// test runs it).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const z = require('zod');

const ROOT = path.resolve(__dirname, '..');
const OUT = path.join(ROOT, 'media', 'config.schema.json');
const { configSchema } = require(path.join(ROOT, 'out', 'src', 'core', 'configSchema.js'));

const KEYS = {
  signals: 'The loop signals: each can be turned off (`enabled`) and has its thresholds (docs/configuration.md, "Signals").',
  volatileKeys: 'Keys whose values differ between two otherwise identical calls (ids, clocks, pids, durations, progress): left out wherever calls are compared.',
  volatileArgs: 'Per tool, the top-level arguments the model writes as commentary (a shell call\'s `description`), left out when calls are compared. A tool named here replaces its default list; `"*"` names every tool.',
  exemptTools: 'Tools whose calls the detectors ignore (a `todo_write` meant to be called often).',
  waitTools: 'Tools that read the output of a process an earlier call started: the repetition signals leave them out.',
  sources: 'Extra event logs to read, as globs inside the workspace.',
  tiers: 'For orchestrators that run tasks in model tiers: the tiers and the one from which a person reviews.',
  agents: 'Per agent, whether its own transcripts are watched (`enabled`), and where they are (`home`).',
  hooks: '`deny`: the signals on which the enforcing hook refuses a call (what it refuses is what `scan` halts); `delegationTools`: the tools PAUSE refuses.',
};

/** Each signal's row of the table in docs/configuration.md: what fires it, and what it does. */
function signalRows() {
  const rows = {};
  const doc = fs.readFileSync(path.join(ROOT, 'docs', 'configuration.md'), 'utf8');
  for (const line of doc.split('\n')) {
    const m = /^\| `([a-z-]+)` \| (.*) \| ([^|]*) \|$/.exec(line);
    if (m) rows[m[1]] = `Fires when ${m[2].trim().replace(/ \(see \[docs\/cli\.md\]\(cli\.md\)\)/, '')}. Action: ${m[3].trim()}.`;
  }
  return rows;
}

function schema() {
  const s = z.toJSONSchema(configSchema, { io: 'input', target: 'draft-7', unrepresentable: 'any' });
  s.title = 'Loop Guardian configuration (.github/guardian/config.json)';
  for (const [key, text] of Object.entries(KEYS)) if (s.properties[key]) s.properties[key].markdownDescription = text;
  const rows = signalRows();
  for (const [id, sub] of Object.entries(s.properties.signals.properties)) {
    if (rows[id] === undefined) throw new Error(`docs/configuration.md has no row for the signal ${id}`);
    sub.markdownDescription = rows[id];
  }
  return `${JSON.stringify(s, null, 2)}\n`;
}

const text = schema();
if (process.argv.includes('--check')) {
  const committed = fs.existsSync(OUT) ? fs.readFileSync(OUT, 'utf8') : '';
  if (committed !== text) {
    process.stderr.write(`${path.relative(ROOT, OUT)} is out of date: run node scripts/configSchema.js\n`);
    process.exit(1);
  }
} else {
  fs.writeFileSync(OUT, text);
  process.stdout.write(`${path.relative(ROOT, OUT)}: ${text.length} characters\n`);
}
