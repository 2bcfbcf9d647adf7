/**
 * Collects lines [line, line + limit) of a text fed in pieces (1-based `line`, `limit` in
 * lines; line terminators kept). Stops early once the window is full; refuses to hold more
 * than `maxBytes` of UTF-8.
 */
export class LineWindow {
  private current = 1;
  private readonly parts: string[] = [];
  private bytes = 0;
  private readonly end: number;

  constructor(
    private readonly line: number,
    limit: number | undefined,
    private readonly maxBytes: number,
    private readonly onTooLarge: (maxBytes: number) => Error,
  ) {
    this.end = limit === undefined ? Number.POSITIVE_INFINITY : line + limit;
  }

  /** True once no further input can change the result. */
  get done(): boolean {
    return this.current >= this.end;
  }

  push(text: string): void {
    let start = 0;
    while (start < text.length && !this.done) {
      const newline = text.indexOf("\n", start);
      const stop = newline === -1 ? text.length : newline + 1;
      if (this.current >= this.line) this.keep(text.slice(start, stop));
      if (newline === -1) break;
      this.current += 1;
      start = stop;
    }
  }

  result(): string {
    return this.parts.join("");
  }

  private keep(piece: string): void {
    this.bytes += Buffer.byteLength(piece, "utf8");
    if (this.bytes > this.maxBytes) throw this.onTooLarge(this.maxBytes);
    this.parts.push(piece);
  }
}

/**
 * Lines `line` (1-based) .. `line + limit - 1` of `text`, each keeping its line ending: the
 * one implementation behind local file reads and the ACP client's fs host. Throws
 * `onTooLarge(maxBytes)` when the window holds more than `maxBytes` of UTF-8.
 */
export function sliceLines(
  text: string,
  line = 1,
  limit: number | undefined = undefined,
  maxBytes = Number.POSITIVE_INFINITY,
  onTooLarge: (maxBytes: number) => Error = (max) => new RangeError(`more than ${max} bytes`),
): string {
  if (line <= 1 && limit === undefined && maxBytes === Number.POSITIVE_INFINITY) return text;
  const window = new LineWindow(line, limit, maxBytes, onTooLarge);
  window.push(text);
  return window.result();
}
