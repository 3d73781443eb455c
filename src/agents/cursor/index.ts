import type { Agent } from '../agent';
import { cursorHook } from './hook';

/**
 * Cursor's agent: enforced through its hooks. Its transcripts are not read: their format is not
 * documented (`transcript_path` is, "null if transcripts disabled"), and what third parties found
 * on disk changed shape twice in 2025-2026 (flat `.txt`, then JSONL without ids or timestamps, and
 * older chats in SQLite): ../shared/docs/vscode-agents.md, sections 4 and 8.
 */
export const cursor: Agent = {
  id: 'cursor',
  label: 'Cursor',
  eventAgent: 'cursor',
  hook: cursorHook,
};
