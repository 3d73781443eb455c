import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { defaultConfig } from '../../../src/core/config';
import { detectFormat, replayFile } from '../../../src/watch/replay';
import { describeShared, FIXTURES } from '../helpers';

/** The real trajectories in ../shared/fixtures, read where they are, and what each must give. */
const CASES = [
  { file: 'swe-agent/eps.traj', format: 'swe-agent', loops: true },
  { file: 'swe-agent/katy.traj', format: 'swe-agent', loops: false },
  { file: 'swe-agent/marshmallow-1867.function_calling.traj', format: 'swe-agent', loops: false },
  { file: 'swe-agent/pydicom__pydicom-1458.traj', format: 'swe-agent', loops: false },
  { file: 'openhands/basic.json', format: 'openhands', loops: false },
  { file: 'cline/session.messages.json', format: 'cline', loops: false },
] as const;

describeShared('adapters on real agent logs', 'the real trajectories', () => {
  for (const c of CASES) {
    it(`${c.file}: read as ${c.format}, ${c.loops ? 'reported as looping' : 'no loop'}`, async () => {
      const abs = path.join(FIXTURES, c.file);
      assert.equal(await detectFormat(abs), c.format);
      const result = await replayFile(abs, c.file, 'auto', defaultConfig());
      assert.equal(result.format, c.format);
      assert.equal(result.skipped, 0, JSON.stringify(result.skippedLines));
      assert.ok(result.events > 0);
      const halts = result.findings.filter((f) => f.action === 'halt');
      if (c.loops) assert.ok(halts.length > 0, 'a halt finding');
      else assert.deepEqual(result.findings.map((f) => `${f.action} ${f.signal}`), []);
    });
  }

  it('eps.traj: the identical submit, 4 times with "Wrong flag!", halts on its third repeat with its lines as evidence', async () => {
    const result = await replayFile(path.join(FIXTURES, 'swe-agent/eps.traj'), 'eps.traj', 'swe-agent', defaultConfig());
    const halt = result.findings.find((f) => f.signal === 'identical-calls');
    assert.ok(halt);
    assert.equal(halt.action, 'halt');
    assert.match(halt.subject, /^submit flag\{People always make the best exploits\.\}/);
    assert.equal(halt.evidence.length, 3);
    // Evidence points at the trajectory steps' lines in the pretty-printed file, in order.
    const lines = halt.evidence.map((r) => r.line);
    assert.deepEqual([...lines].sort((a, b) => a - b), lines);
    assert.ok(lines[0] as number > 1);
    assert.equal(halt.session, 'eps');
    assert.equal(halt.agent, 'swe-agent');
  });

  it('the function-calling trajectory names its tools from the function calls', async () => {
    const result = await replayFile(path.join(FIXTURES, 'swe-agent/marshmallow-1867.function_calling.traj'), 'm.traj', 'swe-agent', { ...defaultConfig() });
    assert.equal(result.events, 11);
  });

  it('the Cline session pairs all its tool uses with results', async () => {
    const { Engine } = await import('../../../src/core/engine');
    const engine = new Engine(defaultConfig());
    const { readAgentDocument } = await import('../../../src/watch/agentLog');
    const { clineTranscript } = await import('../../../src/agents/cline/transcript');
    const seen: string[] = [];
    await readAgentDocument(path.join(FIXTURES, 'cline/session.messages.json'), 'c.json', clineTranscript, {
      event: (e) => {
        seen.push(e.event.type);
        engine.push(e);
      },
      skipped: (s) => assert.fail(JSON.stringify(s)),
    });
    engine.flush();
    assert.equal(seen.filter((t) => t === 'tool').length, 11);
    assert.equal(seen.filter((t) => t === 'tool_result').length, 11);
    assert.equal(engine.stats.unmatchedResults, 0);
    assert.equal(seen[0], 'user');
  });
});
