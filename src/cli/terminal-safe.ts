/**
 * What the agent sends is untrusted: before it reaches a terminal, control and escape
 * sequences are removed (OSC title/clipboard/hyperlink, CSI screen clears and cursor moves,
 * DCS/APC/PM strings, C1 controls, lone ESC, BEL, backspace, carriage return …), keeping
 * newlines and tabs. Our own colours are added after this. `--raw` skips it.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const SEQUENCES = /\u001b\][\s\S]*?(?:\u0007|\u001b\\|$)|\u009d[\s\S]*?(?:\u0007|\u001b\\|\u009c|$)|\u001b[PX^_][\s\S]*?(?:\u001b\\|$)|[\u0090\u0098\u009e\u009f][\s\S]*?(?:\u001b\\|\u009c|$)|\u001b\[[0-?]*[ -/]*[@-~]?|\u009b[0-?]*[ -/]*[@-~]?|\u001b[ -/]*[0-~]?/g;
// eslint-disable-next-line no-control-regex -- see above
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

export function stripControls(text: string): string {
  return text.replace(SEQUENCES, "").replace(CONTROLS, "");
}

/** Every string inside `value` cleaned (plain objects and arrays are copied; Errors keep their class). */
export function sanitizeDeep<T>(value: T): T {
  return clean(value, 0) as T;
}

function clean(value: unknown, depth: number): unknown {
  if (typeof value === "string") return stripControls(value);
  if (depth > 32 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v) => clean(v, depth + 1));
  if (value instanceof Error) {
    const copy = Object.create(Object.getPrototypeOf(value) as object) as Error;
    for (const key of Object.getOwnPropertyNames(value)) (copy as unknown as Record<string, unknown>)[key] = clean((value as unknown as Record<string, unknown>)[key], depth + 1);
    return copy;
  }
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) out[key] = clean(v, depth + 1);
  return out;
}
