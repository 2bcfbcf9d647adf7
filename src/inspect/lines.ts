/** Splits a byte stream into newline-terminated lines (UTF-8 safe: splits on the 0x0a byte). */
export class LineSplitter {
  #rest: Buffer | undefined;

  constructor(private readonly onLine: (line: string) => void) {}

  push(chunk: Buffer): void {
    let start = 0;
    let nl = chunk.indexOf(10, start);
    while (nl !== -1) {
      const piece = chunk.subarray(start, nl);
      const whole = this.#rest ? Buffer.concat([this.#rest, piece]) : piece;
      this.#rest = undefined;
      this.#emit(whole);
      start = nl + 1;
      nl = chunk.indexOf(10, start);
    }
    if (start < chunk.length) {
      const tail = chunk.subarray(start);
      this.#rest = this.#rest ? Buffer.concat([this.#rest, tail]) : Buffer.from(tail);
    }
  }

  /** A last line without a newline still counts at the end of the stream. */
  end(): void {
    if (this.#rest && this.#rest.length > 0) this.#emit(this.#rest);
    this.#rest = undefined;
  }

  #emit(bytes: Buffer): void {
    const line = bytes.toString("utf8").replace(/\r$/, "");
    if (line.trim() !== "") this.onLine(line);
  }
}

/** A wire line as JSON, or the raw text when it is not JSON (the analyzer flags that). */
export function parseLine(line: string): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return line;
  }
}
