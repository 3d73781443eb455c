import * as assert from 'node:assert/strict';
import { unreadAgents, type FoundAgent } from '../../../src/watch/foundAgents';

/** Issue 33, item 2: the editor never says "No loops" about sessions nobody read. */
describe('the agents whose sessions nobody reads', () => {
  const agent = (id: string, over: Partial<FoundAgent>): FoundAgent => ({ id, label: id, transcripts: 1, watched: false, watchable: true, hooked: false, configured: false, ...over });

  it('an agent with sessions here, neither watched nor hooked, is unread; watched, hooked or without sessions, it is not', () => {
    const found = [agent('claude', {}), agent('codex', { transcripts: 3 }), agent('gemini', { watched: true }), agent('cursor', { hooked: true }), agent('qwen', { transcripts: 0 }), agent('windsurf', { watchable: false })];
    const { agents, sessions } = unreadAgents(found);
    assert.deepEqual(agents.map((a) => a.id), ['claude', 'codex']);
    assert.equal(sessions, 4);
  });

  it('nothing unread, nothing said', () => {
    assert.deepEqual(unreadAgents([]), { agents: [], sessions: 0 });
  });
});
