import type { Adapter, AdapterId } from './adapter';
import { claudeCode } from './claudeCode';
import { cline } from './cline';
import { codex } from './codex';
import { gemini } from './gemini';
import { openHands } from './openHands';
import { sweAgent } from './sweAgent';

export * from './adapter';

/** Every adapter; auto-detection asks them in this order. */
export const ADAPTERS: readonly Adapter[] = [codex, gemini, claudeCode, sweAgent, openHands, cline];

export function adapterById(id: AdapterId): Adapter {
  const found = ADAPTERS.find((a) => a.id === id);
  if (!found) throw new Error(`no adapter ${id}`);
  return found;
}

/** The JSONL adapter whose format a file's first record is in. */
export function sniffJsonl(first: Record<string, unknown>): Adapter | undefined {
  return ADAPTERS.find((a) => a.layout === 'jsonl' && a.sniff(first));
}

/** The document adapter whose format a parsed document is in. */
export function sniffDocument(doc: unknown): Adapter | undefined {
  return ADAPTERS.find((a) => a.layout === 'document' && a.sniff(doc));
}
