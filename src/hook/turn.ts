import { agentById } from '../agents';
import type { JsonlAdapter } from '../agents/transcript';

/*
 * What the hook loads only before a prompt, where the previous turn's answer is read from the
 * agent's transcript (its own bundle, dist/cli-turn.js, from its own code cache): the agents'
 * transcript readers. A call that repeats an earlier one needs only the engine (gate.ts).
 */

export { previousTurn, transcriptResults, unseenCalls } from '../watch/transcriptTail';

/** The agent's transcript where it is read line by line: where the previous prompt's answer is. */
export function jsonlTranscript(agentId: string): JsonlAdapter | undefined {
  const transcript = agentById(agentId)?.transcript;
  return transcript?.layout === 'jsonl' ? transcript : undefined;
}
