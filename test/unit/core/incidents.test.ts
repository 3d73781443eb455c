import * as assert from 'node:assert/strict';
import { groupIncidents } from '../../../src/core/incidents';
import { run, times } from '../helpers';

const build = (i: number) => ({ type: 'tool', session: 's', tool: 'bash', args: { command: 'npm run build' }, id: `b${i}`, ok: false, error: 'error TS2304: Cannot find name x' });
const other = (i: number) => ({ type: 'tool', session: 's', tool: 'read_file', args: { path: `f${i}.ts` }, id: `r${i}`, ok: true, output: `content ${i}` });

describe('incidents: one loop, one incident', () => {
  it('the signals that report the same run of calls (identical-calls, failing-call, repeated-error, its early warning) are one incident, led by its most severe finding', () => {
    const { findings } = run(times(4, build));
    assert.ok(new Set(findings.map((f) => f.signal)).size >= 3, findings.map((f) => f.signal).join());
    const incidents = groupIncidents(findings);
    assert.equal(incidents.length, 1);
    const [one] = incidents;
    assert.equal(one?.action, 'halt');
    assert.equal(one?.findings.length, findings.length);
    assert.equal(one?.lead.action, 'halt');
    assert.deepEqual(one?.evidence.map((r) => r.line), [...new Set(findings.flatMap((f) => f.evidence.map((r) => r.line)))].sort((a, b) => a - b));
  });

  it('two loops apart in one session, or the same loop in two sessions, are separate incidents', () => {
    const apart = [...times(3, build), ...times(5, other), ...times(3, (i) => ({ ...build(i + 10), args: { command: 'npm test' } }))];
    assert.equal(groupIncidents(run(apart).findings).filter((i) => i.action === 'halt').length, 2);
    const twoSessions = [...times(3, build), ...times(3, (i) => ({ ...build(i + 20), session: 't' }))];
    const incidents = groupIncidents(run(twoSessions).findings);
    assert.deepEqual(incidents.map((i) => i.session).sort(), ['s', 't']);
  });

  it('no findings, no incidents', () => {
    assert.deepEqual(groupIncidents(run(times(5, other)).findings), []);
  });
});
