import type { Agent } from '../agent';
import { cursorDiscovery } from './discovery';
import { cursorHook } from './hook';
import { cursorArrayTranscript, cursorTextTranscript, cursorTranscript } from './transcript';

/**
 * Cursor's agent: enforced through its hooks, and its agent transcripts read (transcript.ts: the
 * JSONL of current builds, watched; the JSON arrays and plain text of older ones, read by `replay`). Older chats in
 * SQLite are not read (../shared/docs/vscode-agents.md, sections 4 and 8).
 */
export const cursor: Agent = {
  id: 'cursor',
  label: 'Cursor',
  eventAgent: 'cursor',
  hook: cursorHook,
  transcript: cursorTranscript,
  otherTranscripts: [cursorArrayTranscript, cursorTextTranscript],
  discovery: cursorDiscovery,
};
