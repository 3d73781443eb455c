/**
 * Start offsets of the elements of the array under `key` in a top-level JSON object, so that each
 * element of a pretty-printed file can be reported with its line. Expects text JSON.parse accepted.
 */
export function arrayElementOffsets(text: string, key: string): number[] {
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
      if (inTarget && depth === 2 && expectElement) {
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
    if (inTarget && depth === 2 && expectElement && ch !== ']') {
      offsets.push(i);
      expectElement = false;
    }
    if (ch === '{' || ch === '[') {
      depth++;
      if (ch === '[' && depth === 2 && lastString === key) {
        inTarget = true;
        expectElement = true;
      }
    } else if (ch === '}' || ch === ']') {
      if (inTarget && depth === 2) return offsets;
      depth--;
    } else if (ch === ',' && inTarget && depth === 2) {
      expectElement = true;
    } else if (ch === ',' || ch === ':') {
      if (ch === ',' && depth === 1) lastString = '';
    }
    i++;
  }
  return offsets;
}
