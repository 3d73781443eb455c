import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { defaultConfig } from '../../../src/core/config';
import type { Finding } from '../../../src/core/finding';
import { groupIncidents } from '../../../src/core/incidents';
import { replayFile, type ReplayResult } from '../../../src/watch/replay';
import { haltKey, JUDGEMENTS, TURN_READINGS } from '../../real/judgements';
import { config, describeShared, FIXTURES } from '../helpers';

/*
 * Detection judged on real transcripts (issue 9): each finding below was read in its file, line by
 * line, and judged a real loop or a false alarm; the judgement is the test's name. The files are
 * read where they are (../shared/fixtures/real), never copied.
 */

const REAL = path.join(FIXTURES, 'real');
const cache = new Map<string, Promise<ReplayResult>>();
function replay(file: string): Promise<ReplayResult> {
  let r = cache.get(file);
  if (!r) cache.set(file, (r = replayFile(path.join(REAL, file), file, 'auto', defaultConfig())));
  return r;
}

/** `signal@evidence lines` of the findings with the given action. */
const of = (findings: readonly Finding[], action: Finding['action']) => findings.filter((f) => f.action === action).map((f) => `${f.signal}@${f.evidence.map((r) => r.line).join(',')}`);

describeShared('judged on real transcripts (issue 9)', 'the real transcripts', function (this: Mocha.Suite) {
  this.timeout(60_000);

  describe('claude/ccviewer-todo-app-long.jsonl', () => {
    const file = 'claude/ccviewer-todo-app-long.jsonl';

    it('the Edit failed twice with "File has not been read yet" (lines 77, 80), the agent read the file (83) and the same Edit succeeded (86): recovery, no halt; the two identical failures only warn', async () => {
      const r = await replay(file);
      assert.ok(r.events > 0);
      const about86 = r.findings.filter((f) => f.evidence.some((e) => e.line === 86) || f.at.line === 87);
      assert.deepEqual(about86.map((f) => `${f.action} ${f.signal}`), []);
      assert.ok(of(r.findings, 'warn').includes('repeated-error@77,80'));
    });

    it('`npm run build` run four times with a new description each time and the same failure (lines 402-411) is one call repeated: a loop, halt', async () => {
      const r = await replay(file);
      const halts = of(r.findings, 'halt');
      assert.ok(halts.includes('identical-calls@402,405,408'), halts.join(' | '));
      assert.ok(halts.includes('failing-call@402,405'), halts.join(' | '));
    });

    it('Edit, MultiEdit and Write each refused with the same "File has not been read yet" (150-154, and 375-380 where the agent then gave the file up): the same error three times in a row is a loop, halt', async () => {
      const r = await replay(file);
      const halts = of(r.findings, 'halt');
      assert.ok(halts.includes('repeated-error@150,152,154'), halts.join(' | '));
      assert.ok(halts.includes('repeated-error@375,377,380'), halts.join(' | '));
    });

    it('ten findings are five incidents, three of them halting, one per loop: the four-build loop is one incident of four findings', async () => {
      const r = await replay(file);
      const incidents = groupIncidents(r.findings);
      assert.equal(r.findings.length, 10);
      assert.equal(incidents.length, 5);
      assert.equal(incidents.filter((i) => i.action === 'halt').length, 3);
      const builds = incidents.find((i) => i.evidence.some((e) => e.line === 402));
      assert.deepEqual(builds?.findings.map((f) => f.signal).sort(), ['failing-call', 'identical-calls', 'repeated-error', 'repeated-error']);
    });

    it('no other halt: every halt in this session is one of the three loops above', async () => {
      const r = await replay(file);
      assert.deepEqual(of(r.findings, 'halt').sort(), ['failing-call@402,405', 'identical-calls@402,405,408', 'repeated-error@150,152,154', 'repeated-error@375,377,380', 'repeated-error@402,405,408'].sort());
    });
  });

  describe('openhands/msb-ponyc-*-history.json', () => {
    it('msb-ponyc-1: parser.c read whole three times (758, 1023, 1288) with greps finding new lines between is wasteful but progressing: a warning, no halt', async () => {
      const r = await replay('openhands/msb-ponyc-1-history.json');
      assert.ok(r.events > 0);
      assert.deepEqual(of(r.findings, 'halt'), []);
      assert.ok(of(r.findings, 'warn').includes('windowed-repeat@758,1023,1288'));
    });

    it('msb-ponyc-2: str_replace without old_str failing "Parameter old_str is required" three times (2635, 2900, 3036), and the same unmatched str_replace three times (3838, 4246, 4382) are loops: halt', async () => {
      const r = await replay('openhands/msb-ponyc-2-history.json');
      // Each loop is reported twice since its ERROR: results read as failures (failing-call too): one loop, two halts.
      assert.deepEqual(of(r.findings, 'halt').sort(), ['failing-call@2900,3036', 'windowed-repeat@2635,2900,3036', 'windowed-repeat@3838,4246,4382']);
    });

    it('msb-ponyc-3: make failing "can\'t cd to build/build_release" three times in a row under blind variations (4240, 4379, 4518) is a loop: halt, and nothing else halts', async () => {
      const r = await replay('openhands/msb-ponyc-3-history.json');
      assert.deepEqual(of(r.findings, 'halt'), ['repeated-error@4240,4379,4518']);
    });
  });

  it('swe-agent/ctf-BabyEncryption.traj: `python decrypt.py` re-run after each edit with a changing output (traceback, garbage, traceback, the flag) is progress: no finding', async () => {
    const r = await replay('swe-agent/ctf-BabyEncryption.traj');
    assert.ok(r.events > 0);
    assert.deepEqual(r.findings.map((f) => `${f.action} ${f.signal}`), []);
  });

  it('claude/slopometry-0f112eb4.jsonl: Task failed for want of its required `description` (line 8) and retried with it (11): a fix, not a repeat; no finding', async () => {
    const r = await replay('claude/slopometry-0f112eb4.jsonl');
    assert.ok(r.events > 0);
    assert.deepEqual(r.findings.map((f) => `${f.action} ${f.signal}`), []);
    const loose = await replayFile(path.join(REAL, 'claude/slopometry-0f112eb4.jsonl'), 'slopometry', 'auto', config({ signals: { 'identical-calls': { threshold: 2 } } }));
    assert.deepEqual(loose.findings.map((f) => `${f.action} ${f.signal}`), [], 'the two Task calls differ by their description');
  });

  it('copilot-cli/engram-8baa78ec-events.jsonl: read_powershell polling a 16-minute `cargo test` every 120 s (1318-1377), "still running" each time, is waiting on a process, not a loop: no halt', async () => {
    const r = await replay('copilot-cli/engram-8baa78ec-events.jsonl');
    assert.ok(r.events > 0);
    assert.deepEqual(r.findings.map((f) => `${f.action} ${f.signal}`), []);
  });

  it('copilot-cli/engram-07c40cd0-events.jsonl: `agent-intercom-ctl steer` failing to connect twice (107, 114), then given up: a warning, no halt', async () => {
    const r = await replay('copilot-cli/engram-07c40cd0-events.jsonl');
    assert.deepEqual(of(r.findings, 'halt'), []);
    assert.deepEqual(of(r.findings, 'warn'), ['repeated-error@107,114']);
  });

  it('copilot-cli/engram-07c40cd0-events.jsonl: the same message re-sent once (551, 573) after the agent said it could not, then done: no repeated-prompt; one ENOTCONN (160) then work: no storm', async () => {
    const r = await replay('copilot-cli/engram-07c40cd0-events.jsonl');
    assert.equal(r.byType.api_error, 1);
    assert.deepEqual(r.findings.filter((f) => f.signal === 'repeated-prompt' || f.signal === 'api-error-storm'), []);
  });

  // The turn-level readings (issue 14): each file's turn-level findings are exactly the judged ones.
  const TURN = new Set(['repeated-prompt', 'api-error-storm', 're-delegation']);
  for (const t of TURN_READINGS) {
    it(`${t.file} (turn level): ${t.what}: ${t.findings.length === 0 ? 'no finding' : t.findings.join(', ')}`, async () => {
      const r = await replay(t.file);
      assert.ok(r.events > 0);
      assert.deepEqual(r.findings.filter((f) => TURN.has(f.signal)).map((f) => `${f.action} ${haltKey(f)}`), [...t.findings]);
    });
  }

  // Every judged file: its halts are exactly those of its loops, its warnings exactly the judged
  // ones (a file with neither raises no finding at all: even with every repetition threshold at 2,
  // no call in them repeats without progress). This is what npm run measure:real counts.
  for (const j of JUDGEMENTS) {
    it(`${j.file}: ${j.loops.length === 0 ? 'no loop' : j.loops.map((l) => l.what).join('; ')}: ${j.loops.length === 0 ? 'no halt' : 'halt'}${(j.warns ?? []).length > 0 ? ', and only the judged warnings' : ', no warning'}`, async () => {
      const r = await replay(j.file);
      assert.ok(r.events > 0);
      assert.deepEqual(r.findings.filter((f) => f.action === 'halt').map(haltKey).sort(), j.loops.flatMap((l) => l.halts).sort());
      assert.deepEqual(r.findings.filter((f) => f.action !== 'halt').map(haltKey).sort(), [...(j.warns ?? [])].sort());
    });
  }
});
