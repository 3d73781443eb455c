import * as path from 'node:path';

/** The shared corpus of real transcripts, read where it is (never copied into the project). */
export const REAL = path.resolve(__dirname, '..', '..', '..', '..', 'shared', 'fixtures', 'real');

/** What a careful reader found in one real transcript, by reading it at the evidence. */
export interface Judgement {
  /** Relative to REAL. */
  readonly file: string;
  /** The reader's judgement, in words: it names the test. */
  readonly verdict: string;
  /** The halts the guardian must raise (signal, and the line of the event it fires on); none for a healthy run. */
  readonly halts: readonly { readonly signal: string; readonly line: number }[];
}

export const JUDGEMENTS: readonly Judgement[] = [];
