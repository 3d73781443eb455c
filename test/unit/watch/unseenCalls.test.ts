import { strict as assert } from 'node:assert';
import type { GuardianEvent, LocatedEvent } from '../../../src/core/events';
import type { EventSink } from '../../../src/watch/eventLog';
import { UnseenCalls } from '../../../src/watch/unseenCalls';

/* A hooked session's hook log and transcript, paired by call id: each call counted once (src/watch/unseenCalls.ts). */

const KEY = 'claude:s1';
let line = 0;
const at = (file: string, event: GuardianEvent): LocatedEvent => ({ event, ref: { file, line: ++line, event: line } });
const call = (file: string, id: string, tool = 'Edit'): LocatedEvent => at(file, { v: 1, type: 'tool', session: 's1', tool, args: { file_path: 'a.js' }, id });
const result = (file: string, id: string): LocatedEvent => at(file, { v: 1, type: 'tool_result', session: 's1', id, ok: false, error: '<tool_use_error>String to replace not found in file.</tool_use_error>' });

function collector(): { sink: EventSink; got: string[] } {
  const got: string[] = [];
  return { got, sink: { event: (e) => got.push(`${e.ref.file} ${e.event.type} ${e.event.type === 'tool' || e.event.type === 'tool_result' ? e.event.id : ''}`), skipped: () => undefined } };
}

describe('UnseenCalls: a hooked session read from its hook log and its transcript', () => {
  it('takes from the transcript only settled calls the hook log lacks, after the hook log is read again; its prompts are the hook log\'s', () => {
    const u = new UnseenCalls();
    const { sink, got } = collector();
    u.hookEvent(KEY, at('hook', { v: 1, type: 'prompt', session: 's1', text: 'fix it' }), sink);
    u.hookEvent(KEY, call('hook', 'seen'), sink);
    u.transcriptEvent(KEY, true, at('t', { v: 1, type: 'prompt', session: 's1', text: 'fix it' }), sink);
    for (const id of ['seen', 'e1', 'late', 'open']) u.transcriptEvent(KEY, true, call('t', id), sink);
    for (const id of ['seen', 'e1', 'late']) u.transcriptEvent(KEY, true, result('t', id), sink);
    assert.deepEqual([...u.waiting], [KEY]);
    // The hook recorded `late` before it ran; its log is read again before the flush.
    u.hookEvent(KEY, call('hook', 'late'), sink);
    u.flush();
    assert.deepEqual(got, ['hook prompt ', 'hook tool seen', 'hook tool late', 't tool e1', 't tool_result e1']);
  });

  it('a call counted from the transcript first is not counted again when the hook records it later', () => {
    const u = new UnseenCalls();
    const { sink, got } = collector();
    u.transcriptEvent(KEY, true, call('t', 'e1'), sink);
    u.transcriptEvent(KEY, true, result('t', 'e1'), sink);
    u.flush();
    u.hookEvent(KEY, { ...call('hook', 'e1'), event: { ...call('hook', 'e1').event, ok: false, error: 'x' } as GuardianEvent }, sink);
    u.hookEvent(KEY, call('hook', 'e2', 'Bash'), sink);
    assert.deepEqual(got, ['t tool e1', 't tool_result e1', 'hook tool e2']);
  });

  it('a session the hook does not record passes whole; a hook log that shows up later does not count its calls again', () => {
    const u = new UnseenCalls();
    const { sink, got } = collector();
    u.transcriptEvent(KEY, false, at('t', { v: 1, type: 'prompt', session: 's1', text: 'go' }), sink);
    u.transcriptEvent(KEY, false, call('t', 'c1', 'Bash'), sink);
    u.hookEvent(KEY, call('hook', 'c1', 'Bash'), sink);
    assert.deepEqual(got, ['t prompt ', 't tool c1']);
  });
});
