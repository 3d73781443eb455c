/**
 * Start offsets of the elements of the array under `key` in a top-level JSON object (or of the
 * document itself when `key` is null and it is an array), so that each element of a
 * pretty-printed file can be reported with its line. Expects text JSON.parse accepted.
 */
export function arrayElementOffsets(text: string, key: string | null): number[] {
  const target = key === null ? 1 : 2;
  const offsets: number[] = [];
  let depth = 0;
  let i = 0;
  let lastString = '';
  let inTarget = false;
  let expectElement = false;
  const n = text.length;
  while (i < n) {
    const ch = text[i] as string;
    if (ch === '"') {
      const start = i;
      i++;
      while (i < n && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      if (inTarget && depth === target && expectElement) {
        offsets.push(start);
        expectElement = false;
      }
      lastString = text.slice(start + 1, i);
      i++;
      continue;
    }
    if (ch === ' ' || ch === '\n' || ch === '\r' || ch === '\t') {
      i++;
      continue;
    }
    if (inTarget && depth === target && expectElement && ch !== ']') {
      offsets.push(i);
      expectElement = false;
    }
    if (ch === '{' || ch === '[') {
      depth++;
      if (ch === '[' && depth === target && (key === null || lastString === key)) {
        inTarget = true;
        expectElement = true;
      }
    } else if (ch === '}' || ch === ']') {
      if (inTarget && depth === target) return offsets;
      depth--;
    } else if (ch === ',' && inTarget && depth === target) {
      expectElement = true;
    } else if (ch === ',' || ch === ':') {
      if (ch === ',' && depth === 1) lastString = '';
    }
    i++;
  }
  return offsets;
}

/** The 1-based line of each offset (offsets ascending). */
export function linesOfOffsets(text: string, offsets: readonly number[]): number[] {
  const lines: number[] = [];
  let line = 1;
  let pos = 0;
  for (const offset of offsets) {
    for (; pos < offset && pos < text.length; pos++) if (text.charCodeAt(pos) === 10) line++;
    lines.push(line);
  }
  return lines;
}

/** Line and column (1-based) of a character offset. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/** Where JSON.parse stopped, from its message ("at position N" or "line L column C"). */
export function jsonErrorLocation(text: string, err: Error): { line: number; column: number } | undefined {
  const lc = /line (\d+) column (\d+)/.exec(err.message);
  if (lc) return { line: Number(lc[1]), column: Number(lc[2]) };
  const pos = /position (\d+)/.exec(err.message);
  if (pos) return lineColumn(text, Number(pos[1]));
  if (/Unexpected end of JSON input/.test(err.message)) return lineColumn(text, text.length);
  return undefined;
}
