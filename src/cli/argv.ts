import { isAbsolute, resolve } from "node:path";
import { UsageError } from "./usage.js";

/** One word of a hand-walked command line (`prompt`, `inspect`, `demo`). */
export interface ArgWord {
  /** The word as given. */
  arg: string;
  /** The flag: the word, or its part before `=` for `--flag=value`. */
  flag: string;
  /** The flag's value: after `=`, else the next word (UsageError if there is none). */
  value(): string;
  /** Everything after this word; the walk ends here (for `--`). */
  rest(): string[];
}

/** Walks `argv` word by word; the caller's switch decides what each flag means. */
export function* argWords(argv: readonly string[]): Generator<ArgWord> {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const eq = arg.startsWith("--") ? arg.indexOf("=") : -1;
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const inline = eq > 0 ? arg.slice(eq + 1) : undefined;
    let ended = false;
    yield {
      arg,
      flag,
      value: () => {
        if (inline !== undefined) return inline;
        const next = argv[++i];
        if (next === undefined) throw new UsageError(`${flag} needs a value`);
        return next;
      },
      rest: () => {
        ended = true;
        return argv.slice(i + 1);
      },
    };
    if (ended) return;
  }
}

/** A directory option (`--cwd`, `--audit-log`, …) made absolute against `base`. */
export function absolutePath(path: string, base: string): string {
  return isAbsolute(path) ? path : resolve(base, path);
}
