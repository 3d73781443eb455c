/**
 * A pure function of a text, remembered for the texts it was last asked about: a loop is the same
 * error again and again, and each is read by several signals (classified, hashed, compared). At
 * most `size` texts of at most `maxLength` characters are kept (a long text is computed each
 * time: the memory it would hold costs more than computing it); when full, all are forgotten at
 * once, which costs nothing per call, where keeping the most recent would cost a write on each.
 */
export function memoOfText<T>(compute: (text: string) => T, size = 512, maxLength = 8192): (text: string) => T {
  const known = new Map<string, T>();
  return (text) => {
    if (text.length > maxLength) return compute(text);
    const found = known.get(text);
    if (found !== undefined) return found;
    const value = compute(text);
    if (known.size >= size) known.clear();
    known.set(text, value);
    return value;
  };
}
