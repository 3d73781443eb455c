import * as path from 'node:path';
import type { JsonlAdapter } from '../agents/transcript';
import type { GuardianEvent } from '../core/events';
import { parseJson } from '../core/json';
import { openRegularFile } from '../state/regularFile';

/** How much of a transcript's end is read for the latest answer: a turn's last records fit well in it. */
export const TRANSCRIPT_TAIL_BYTES = 256 * 1024;

/**
 * The answer a session gave to its latest prompt, from the end of its transcript (which the
 * agent names to its hook): the last `reply` its reader finds after the last prompt, undefined
 * when the end holds none (the turn wrote no text, the file lags, or it is not the agent's
 * format). Read-only, bounded and non-blocking: the file is the agent's, outside the workspace.
 */
export async function latestAnswer(file: string, adapter: JsonlAdapter, maxBytes = TRANSCRIPT_TAIL_BYTES): Promise<string | undefined> {
  const handle = await openRegularFile(file);
  let text: string;
  let cut: boolean;
  try {
    const { size } = await handle.stat();
    const start = Math.max(0, size - maxBytes);
    const buf = Buffer.alloc(size - start);
    const { bytesRead } = await handle.read(buf, 0, buf.length, start);
    text = buf.toString('utf8', 0, bytesRead);
    cut = start > 0;
  } finally {
    await handle.close();
  }
  const lines = text.split('\n');
  // A cut first line is a piece of a record.
  if (cut) lines.shift();
  const events: GuardianEvent[] = [];
  const decoder = adapter.decoder(path.basename(file));
  const sink = { event: (e: GuardianEvent) => events.push(e), skipped: () => undefined };
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    const parsed = parseJson(line);
    if (parsed.ok) decoder.record(parsed.value, i + 1, sink);
  });
  let answer: string | undefined;
  for (const e of events) {
    if (e.type === 'prompt' || e.type === 'user') answer = undefined;
    else if (e.type === 'reply') answer = e.text;
  }
  return answer;
}
