import * as assert from 'node:assert/strict';
import { only, run } from '../helpers';

describe('identical-output (seed 002)', () => {
  it('halts on functionally identical output twice in a row', () => {
    const events = [
      { type: 'output', session: 's', text: 'I will now fix the bug.\n Done at 2026-01-01T10:00:00Z' },
      { type: 'output', session: 's', text: 'I will now fix the  bug.\nDone at 2026-01-01T10:05:00Z' },
    ];
    const found = only(run(events).findings, 'identical-output');
    assert.equal(found.length, 1);
    assert.equal(found[0]?.action, 'halt');
    assert.equal(found[0]?.status, 'STALLED');
  });

  it('does not fire on different outputs or outputs that are not consecutive', () => {
    const events = [
      { type: 'output', text: 'plan A' },
      { type: 'output', text: 'plan B' },
      { type: 'output', text: 'plan A' },
    ];
    assert.equal(only(run(events).findings, 'identical-output').length, 0);
  });

  it('keeps agents apart within a session', () => {
    const events = [
      { type: 'output', session: 's', agent: 'a', text: 'same' },
      { type: 'output', session: 's', agent: 'b', text: 'same' },
    ];
    assert.equal(only(run(events).findings, 'identical-output').length, 0);
  });
});
