import { agentById } from '../agents';
import type { JsonlAdapter } from '../agents/transcript';

/*
 * What the hook loads only when it must replay the session (its own bundle, dist/cli-replay.js,
 * from its own code cache): the engine with every detector, for a call that repeats an earlier one
 * (`judgeByReplay`) and for a prompt (`promptGate`), and the agents' transcript readers, for the
 * answer to the previous prompt. Most calls are decided without them (`quickVerdict`).
 */

export { judgeByReplay, promptGate } from '../core/gate';
export { previousTurn } from '../watch/transcriptTail';

/** The agent's transcript where it is read line by line: where the previous prompt's answer is. */
export function jsonlTranscript(agentId: string): JsonlAdapter | undefined {
  const transcript = agentById(agentId)?.transcript;
  return transcript?.layout === 'jsonl' ? transcript : undefined;
}
