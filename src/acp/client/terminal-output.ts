/**
 * A terminal's retained output: at most `limit` bytes, the most recent ones. When bytes are
 * dropped from the start, the cut moves forward to the next UTF-8 character boundary, so the
 * text is always valid (possibly a few bytes under the limit).
 */
export class OutputBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  private dropped = false;

  constructor(private readonly limit: number) {}

  get truncated(): boolean {
    return this.dropped;
  }

  append(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.size += chunk.length;
    if (this.size > this.limit) this.trim();
  }

  /**
   * The retained text. While the command runs, an incomplete character at the end is held
   * back (it completes with the next chunk); once `final`, invalid bytes decode as U+FFFD.
   */
  text(final: boolean): string {
    const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size);
    if (this.chunks.length > 1) this.chunks = [all];
    const end = final ? all.length : completeEnd(all);
    return all.toString("utf8", 0, end);
  }

  clear(): void {
    this.chunks = [];
    this.size = 0;
  }

  private trim(): void {
    let excess = this.size - this.limit;
    while (excess > 0 && this.chunks.length > 0) {
      const first = this.chunks[0]!;
      if (first.length <= excess) {
        this.chunks.shift();
        this.size -= first.length;
        excess -= first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.size -= excess;
        excess = 0;
      }
    }
    this.dropped = true;
    // Skip continuation bytes (10xxxxxx) so the kept text starts on a character boundary.
    while (this.chunks.length > 0) {
      const first = this.chunks[0]!;
      let skip = 0;
      while (skip < first.length && skip < 3 && (first[skip]! & 0xc0) === 0x80) skip++;
      if (skip === 0) break;
      this.chunks[0] = first.subarray(skip);
      this.size -= skip;
      if (this.chunks[0].length > 0) break;
      this.chunks.shift();
    }
  }
}

/** Length of `buf` without a trailing incomplete UTF-8 sequence. */
function completeEnd(buf: Buffer): number {
  let i = buf.length - 1;
  let back = 0;
  while (i >= 0 && back < 3 && (buf[i]! & 0xc0) === 0x80) {
    i--;
    back++;
  }
  if (i < 0) return buf.length;
  const lead = buf[i]!;
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return need > back + 1 ? i : buf.length;
}
