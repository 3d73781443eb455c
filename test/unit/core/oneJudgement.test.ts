import * as assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import * as path from 'node:path';
import { attemptKey } from '../../../src/core/attempt';
import { Canonicalizer } from '../../../src/core/canonical';
import type { GuardianConfig } from '../../../src/core/config';
import { Engine, LatestFindings } from '../../../src/core/engine';
import type { LocatedEvent } from '../../../src/core/events';
import type { Finding } from '../../../src/core/finding';
import { gate } from '../../../src/core/gate';
import { mayRepeatIn } from '../../../src/core/verdict';
import { readEvents } from '../../../src/watch/replay';
import { config, describeShared, FIXTURES, located } from '../helpers';
import { claudeTranscript } from '../../../src/agents/claude/transcript';
import { decode } from '../agents/util';
import { nonConverging, thrash } from '../agents/issue34Sessions';

/*
 * One judgement (issue 36): the hook and `replay` decide with one engine. Each session is replayed
 * whole, as `replay` reads it, and call by call through the gate as the hook asks it (the log's
 * text first, `mayRepeatIn`, then the gate over the session so far, at most the hook's 300 latest
 * events). They agree when:
 *   A. every call the gate refuses belongs to a loop the replay halts: a halt whose evidence holds
 *      that call or an earlier call of its attempt (the hook refuses nothing `scan` does not halt);
 *   B. after each halt the replay raises, the session's next call, when it is a call of the loop
 *      tried again (a cycle: its next call), is refused by the gate (`scan` halts nothing the
 *      hook would have let run).
 */

/** The events the hook keeps of a session (hookLog.ts TAIL_EVENTS). */
const HOOK_TAIL = 300;

interface Agreement {
  calls: number;
  refused: number;
  /** Halts after which the session's next call was the loop's, so the gate was asked (B). */
  haltsFollowed: number;
  disagreements: string[];
}

function bySession(events: readonly LocatedEvent[]): LocatedEvent[][] {
  const sessions = new Map<string, LocatedEvent[]>();
  for (const e of events) {
    const key = e.event.session ?? e.ref.file;
    let list = sessions.get(key);
    if (list === undefined) sessions.set(key, (list = []));
    list.push(e);
  }
  return [...sessions.values()];
}

function judgeSession(events: readonly LocatedEvent[], cfg: GuardianConfig, out: Agreement, label: string): void {
  const deny = new Set(cfg.hooks.deny);
  const canon = new Canonicalizer(cfg.volatileKeys, cfg.volatileArgs);
  const index = new Map(events.map((e, i) => [`${e.ref.file}:${e.ref.line}:${e.ref.event}`, i]));
  const at = (ref: Finding['at']) => index.get(`${ref.file}:${ref.line}:${ref.event}`) ?? -1;
  const attemptAt = (i: number) => {
    const e = events[i]?.event;
    return e?.type === 'tool' ? attemptKey(canon, e.tool, e.args ?? {}) : undefined;
  };
  // The whole session, as `replay` judges it.
  // `replay` reports each finding as it stood last (LatestFindings): a loop whose calls went on
  // after it was raised holds them too (A reads that); B reads the finding as it was raised.
  const latest = new LatestFindings();
  const engine = new Engine(cfg, { onEpisodeEnd: (f, raised) => latest.note(f, raised) });
  const halts: Finding[] = [];
  for (const e of events) halts.push(...engine.push(e).filter((f) => f.action === 'halt' && deny.has(f.signal)));
  halts.push(...engine.flush().filter((f) => f.action === 'halt' && deny.has(f.signal)));
  engine.noteActive((f, raised) => latest.note(f, raised));
  const haltsOf = halts.map((f) => ({ f, evidence: f.evidence.map(at), reported: [...f.evidence, ...latest.latest(f).evidence].map(at) }));

  const verdicts = new Map<number, boolean>();
  const ask = (i: number): boolean => {
    const known = verdicts.get(i);
    if (known !== undefined) return known;
    const e = events[i] as LocatedEvent;
    if (e.event.type !== 'tool') throw new Error('not a call');
    const history = events.slice(Math.max(0, i - HOOK_TAIL), i);
    const call = { tool: e.event.tool, args: e.event.args ?? {}, session: e.event.session ?? 's', agent: e.event.agent ?? 'a', ts: e.event.ts ?? '' };
    const text = history.map((h) => JSON.stringify(h.event)).join('\n');
    const allowed = !mayRepeatIn(text, call, cfg) || gate({ history, call, stop: { status: 'CLEAR' }, config: cfg }).allow;
    verdicts.set(i, allowed);
    return allowed;
  };

  events.forEach((e, i) => {
    if (e.event.type !== 'tool') return;
    out.calls++;
    if (ask(i)) return;
    out.refused++;
    // A: a halt of the replay holds this call, or an earlier call of its attempt.
    const attempt = attemptAt(i);
    const held = haltsOf.some(({ reported }) => reported.some((j) => j === i || (j < i && attemptAt(j) === attempt)));
    if (!held) out.disagreements.push(`${label}: the gate refused ${e.event.tool} at line ${e.ref.line}, which no halt of the replay holds`);
  });

  for (const { f, evidence } of haltsOf) {
    // B: the session's next call after the halt was raised, before any person's turn.
    const raised = at(f.at);
    let next = -1;
    for (let j = raised + 1; j < events.length; j++) {
      const t = events[j]?.event.type;
      if (t === 'user') break;
      if (t === 'tool') {
        next = j;
        break;
      }
    }
    if (next < 0 || evidence.some((j) => j >= next)) continue;
    const attempts = evidence.map(attemptAt);
    const loops = f.signal === 'cycle' ? attemptAt(next) === cycleNext(attempts) || attemptAt(next) === attempts[attempts.length - 1] : attempts.includes(attemptAt(next));
    if (!loops) continue;
    out.haltsFollowed++;
    if (ask(next)) out.disagreements.push(`${label}: the replay halts ${f.signal} (${f.count}/${f.threshold}) at line ${f.at.line}, yet the gate let the loop's next call at line ${events[next]?.ref.line} run`);
  }
}

function cycleNext(attempts: readonly (string | undefined)[]): string | undefined {
  for (let p = 2; p * 2 <= attempts.length; p++) {
    if (attempts.every((a, i) => i < p || (a !== undefined && a === attempts[i - p]))) return attempts[attempts.length - p];
  }
  return undefined;
}

function agreement(sessions: readonly (readonly LocatedEvent[])[], cfg: GuardianConfig, label: string): Agreement {
  const out: Agreement = { calls: 0, refused: 0, haltsFollowed: 0, disagreements: [] };
  sessions.forEach((s, n) => judgeSession(s, cfg, out, `${label} #${n + 1}`));
  return out;
}

/** A session that retries one failing command `times` times, each try written another way. */
function retried(commands: readonly string[], times: number, error: (i: number) => string, session = 's'): Record<string, unknown>[] {
  return Array.from({ length: times }, (_, i) => [
    { type: 'tool', tool: 'Bash', args: { command: commands[i % commands.length], description: `try ${i}` }, id: `${session}-c${i}`, session, agent: 'claude-code' },
    { type: 'tool_result', id: `${session}-c${i}`, ok: false, error: error(i), session, agent: 'claude-code' },
  ]).flat();
}

const MIGRATE = ['npm run db:migrate', 'npm run db:migrate 2>&1', 'cd /work/app && npm run db:migrate', 'sleep 1 && npm run db:migrate', 'npm run db:migrate --verbose', 'npm run db:migrate 2>&1 | tail -20'];
const MIGRATE_ERROR = (i: number) => `Exit code 1\n\n> app@1.0.0 db:migrate\n> node migrate.js\n\nError: Cannot find module './db/schema.sql'\nnpm error A complete log of this run can be found in: /root/.npm/_logs/2026-11-27T19_3${i % 10}_00_000Z-debug-0.log`;

describe('one judgement: the gate, call by call, agrees with the replay (issue 36)', () => {
  it('on the scenarios of issue 36 and their healthy look-alikes', () => {
    const cfg = config();
    const sessions: Record<string, unknown>[][] = [
      retried(MIGRATE, 10, MIGRATE_ERROR, 'variations'),
      retried(['npm run db:migrate'], 8, MIGRATE_ERROR, 'exact'),
      // Healthy: the same command whose error changes each time (an edit -> test cycle making progress), then green.
      [
        ...Array.from({ length: 5 }, (_, i) => [
          { type: 'tool', tool: 'Edit', args: { file_path: 'value.txt', old_string: String(i), new_string: String(i + 1) }, ok: true, output: 'edited', session: 'healthy', agent: 'a' },
          { type: 'tool', tool: 'Bash', args: { command: 'npm test' }, ...(i < 4 ? { ok: false, error: `Exit code 1\nexpected 5, got ${i + 1}` } : { ok: true, output: 'green' }), session: 'healthy', agent: 'a' },
        ]).flat(),
      ],
      // A cycle of two failing calls.
      Array.from({ length: 8 }, (_, i) => ({ type: 'tool', tool: i % 2 === 0 ? 'Read' : 'Bash', args: i % 2 === 0 ? { file_path: 'missing.ts' } : { command: 'npm run build' }, ok: false, error: i % 2 === 0 ? 'ENOENT: no such file' : 'Exit code 2\nerror TS2304', session: 'cycle', agent: 'a' })),
    ];
    const result = agreement(
      sessions.map((s) => located(s)),
      cfg,
      'scenario',
    );
    assert.deepEqual(result.disagreements, []);
    assert.ok(result.refused >= 10, `refused ${result.refused}`);
    assert.ok(result.haltsFollowed >= 3, `halts followed by the loop's next call: ${result.haltsFollowed}`);
  });
});

describe('one judgement on issue 34\'s loops, read from Claude Code transcripts of our own', () => {
  it('a Read→Edit cycle that never converges, and compaction thrash', () => {
    const cfg = config();
    const sessions = [nonConverging(8), thrash(6)].map((t, n) =>
      located(
        decode(claudeTranscript, t.records).events.map((e) => e.event as unknown as Record<string, unknown>),
        `issue34-${n}.jsonl`,
      ),
    );
    const result = agreement(sessions, cfg, 'issue 34');
    assert.deepEqual(result.disagreements, []);
    assert.ok(result.refused >= 2, `refused ${result.refused}`);
    assert.ok(result.haltsFollowed >= 2, `halts followed by the loop's next call: ${result.haltsFollowed}`);
  });
});

describeShared('one judgement on the real transcripts: the gate, call by call, agrees with the replay (issue 36)', 'the real transcripts', () => {
  const dir = path.join(FIXTURES, 'real');
  for (const folder of readdirSync(dir).filter((f) => !f.endsWith('.md')).sort()) {
    it(`real/${folder}`, async function () {
      this.timeout(240_000);
      const cfg = config();
      const total: Agreement = { calls: 0, refused: 0, haltsFollowed: 0, disagreements: [] };
      for (const f of readdirSync(path.join(dir, folder)).sort()) {
        const events: LocatedEvent[] = [];
        await readEvents(path.join(dir, folder, f), f, 'auto', (e) => events.push(e));
        bySession(events).forEach((s, n) => judgeSession(s, cfg, total, `${folder}/${f} session ${n + 1}`));
      }
      if (process.env.ONE_JUDGEMENT_STATS) console.log(folder, total.calls, total.refused, total.haltsFollowed);
      assert.deepEqual(total.disagreements, []);
      assert.ok(total.calls > 0, 'calls read');
    });
  }
});
