import type { Agent } from '../agent';
import { qwenDiscovery } from './discovery';
import { qwenTranscript } from './transcript';

/**
 * Qwen Code (a Gemini CLI fork): watched through its chat recordings. It takes Claude-style hooks
 * from `.qwen/settings.json` (../shared/docs/live-agents.md), which the guardian does not register
 * yet: it is watched, not enforced.
 */
export const qwen: Agent = {
  id: 'qwen',
  label: 'Qwen Code',
  eventAgent: qwenTranscript.agent,
  transcript: qwenTranscript,
  discovery: qwenDiscovery,
};
