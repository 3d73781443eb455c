/**
 * `npm run measure:real`: every transcript of the shared real corpus (`../shared/fixtures/real/`)
 * through `replay --format auto`, as a table per agent: files, files read, events, halts and warns,
 * and against the judgements in `judgements.ts` (what a careful reader found in each file): loops
 * caught, loops missed, false halts. The README's "Measured on real transcripts" is its output.
 * A second table counts, per transcript, the turn-level events read (prompts, replies, failed
 * model requests, delegations and their results) and the findings of the turn-level signals.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { defaultConfig } from '../../src/core/config';
import { replayFile } from '../../src/watch/replay';
import { haltKey, JUDGEMENTS, REAL } from './judgements';

/** The signals over turn-level events (issue 14). */
const TURN_SIGNALS = new Set(['repeated-prompt', 'api-error-storm', 're-delegation']);

interface Row {
  files: number;
  read: number;
  events: number;
  halts: number;
  warns: number;
  loops: number;
  caught: number;
  missed: number;
  falseHalts: number;
  unjudged: number;
}

async function corpus(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const d of await fs.readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) out.push(...(await corpus(p)));
    else if (d.name !== 'SOURCES.md') out.push(path.relative(REAL, p));
  }
  return out.sort();
}

async function main(): Promise<void> {
  const rows = new Map<string, Row>();
  const details: string[] = [];
  const turnRows = ['| transcript | prompts | replies | API errors | delegations | came back | turn-level findings |', '| --- | ---: | ---: | ---: | ---: | ---: | --- |'];
  for (const file of await corpus(REAL)) {
    const agent = file.split(path.sep)[0] as string;
    const row = rows.get(agent) ?? { files: 0, read: 0, events: 0, halts: 0, warns: 0, loops: 0, caught: 0, missed: 0, falseHalts: 0, unjudged: 0 };
    rows.set(agent, row);
    row.files++;
    let halts: string[] = [];
    try {
      const r = await replayFile(path.join(REAL, file), file, 'auto', defaultConfig());
      if (r.events > 0) row.read++;
      row.events += r.events;
      halts = r.findings.filter((f) => f.action === 'halt').map(haltKey);
      row.halts += halts.length;
      row.warns += r.findings.filter((f) => f.action === 'warn' || f.action === 'escalate').length;
      details.push(`${file}: ${r.format}, ${r.events} events, ${r.skipped} skipped, halts [${halts.join(', ')}]`);
      const n = (t: string) => r.byType[t] ?? 0;
      const turnFindings = r.findings.filter((f) => TURN_SIGNALS.has(f.signal)).map((f) => `${f.action} ${haltKey(f)}`);
      turnRows.push(`| ${file} | ${n('prompt')} | ${n('reply')} | ${n('api_error')} | ${n('delegation')} | ${n('delegation_result')} | ${turnFindings.join(', ') || '–'} |`);
    } catch (err) {
      details.push(`${file}: not read (${(err as Error).message.split('\n')[0]})`);
    }
    const judged = JUDGEMENTS.find((j) => j.file === file);
    if (!judged) {
      row.unjudged++;
      continue;
    }
    // A loop is caught when one of its halts is raised; a halt on no judged loop is a false one.
    for (const loop of judged.loops) {
      row.loops++;
      if (loop.halts.some((h) => halts.includes(h))) row.caught++;
      else row.missed++;
    }
    const expected = new Set(judged.loops.flatMap((l) => l.halts));
    row.falseHalts += halts.filter((h) => !expected.has(h)).length;
  }
  const total: Row = { files: 0, read: 0, events: 0, halts: 0, warns: 0, loops: 0, caught: 0, missed: 0, falseHalts: 0, unjudged: 0 };
  const lines = ['| agent | files | read | events | halts | warnings | loops (judged) | caught | missed | false halts | not judged yet |', '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |'];
  for (const [agent, r] of [...rows.entries()].sort()) {
    for (const k of Object.keys(total) as (keyof Row)[]) total[k] += r[k];
    lines.push(`| ${agent} | ${r.files} | ${r.read} | ${r.events} | ${r.halts} | ${r.warns} | ${r.loops} | ${r.caught} | ${r.missed} | ${r.falseHalts} | ${r.unjudged} |`);
  }
  const t = total;
  lines.push(`| **all** | ${t.files} | ${t.read} | ${t.events} | ${t.halts} | ${t.warns} | ${t.loops} | ${t.caught} | ${t.missed} | ${t.falseHalts} | ${t.unjudged} |`);
  process.stdout.write(`${lines.join('\n')}\n\n${turnRows.join('\n')}\n\n${process.argv.includes('--files') ? `${details.join('\n')}\n` : ''}`);
}

main().catch((err: unknown) => {
  process.stderr.write(`measure: ${(err as Error).message}\n`);
  process.exitCode = 1;
});
