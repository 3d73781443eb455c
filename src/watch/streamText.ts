/**
 * A stream's text to its end, at most `maxBytes` (past that it is destroyed and the promise
 * rejects, naming the stream). Read through the event loop: nothing here blocks a worker thread.
 * `head`: bytes of the same source read before, which the text starts with.
 */
export function readToEnd(stream: NodeJS.ReadableStream & { destroy(): void }, name: string, maxBytes: number, head?: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = head !== undefined ? [head] : [];
    let total = head?.length ?? 0;
    stream.on('data', (chunk: Buffer | string) => {
      const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      chunks.push(b);
      total += b.length;
      if (total > maxBytes) {
        stream.destroy();
        reject(new Error(`${name}: more than ${maxBytes} bytes`));
      }
    });
    stream.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    stream.on('error', (err: Error) => reject(new Error(`${name}: cannot read (${(err as NodeJS.ErrnoException).code ?? err.message})`)));
  });
}
