import { existsSync } from "node:fs";
import { extname, join } from "node:path";

/** What to run: a program with its arguments, or one command line for a shell. */
export type LaunchSpec = { command: string; args?: readonly string[] } | { shellLine: string; shell?: string };

/** A spec resolved for `spawn` on one platform. */
export interface ResolvedLaunch {
  file: string;
  args: string[];
  /** Windows: the arguments are already quoted for cmd.exe. */
  windowsVerbatimArguments?: boolean;
}

export interface ResolveLaunchOptions {
  /** Default: the running platform (tests inject another). */
  platform?: NodeJS.Platform;
  /** PATH, PATHEXT and ComSpec come from here (default: this process's environment). */
  env?: NodeJS.ProcessEnv;
}

/**
 * The file and arguments that run `spec`. POSIX: a shell line runs under `/bin/sh -c` (or
 * `shell`), a command as given (the kernel searches PATH). Windows has no `sh` and cannot spawn
 * the `.cmd` shims that `npx`, `npm` or a package's bin are there: a shell line runs under
 * `cmd.exe /d /s /c`, and a command is looked up on PATH with PATHEXT; a shim runs through
 * cmd.exe with every argument escaped (as cross-spawn and execa do).
 */
export function resolveLaunch(spec: LaunchSpec, options: ResolveLaunchOptions = {}): ResolvedLaunch {
  const platform = options.platform ?? process.platform;
  const env = options.env ?? process.env;
  if (platform !== "win32") {
    if ("shellLine" in spec) return { file: spec.shell ?? "/bin/sh", args: ["-c", spec.shellLine] };
    return { file: spec.command, args: [...(spec.args ?? [])] };
  }
  const comSpec = env.ComSpec ?? env.COMSPEC ?? "cmd.exe";
  if ("shellLine" in spec) return { file: spec.shell ?? comSpec, args: ["/d", "/s", "/c", `"${spec.shellLine}"`], windowsVerbatimArguments: true };
  const found = findOnWindowsPath(spec.command, env);
  if (found === undefined || !/\.(cmd|bat)$/i.test(found)) return { file: found ?? spec.command, args: [...(spec.args ?? [])] };
  // A node_modules/.bin shim passes its arguments through cmd.exe once more: escape twice.
  const twice = /node_modules[\\/]\.bin[\\/][^\\/]+\.cmd$/i.test(found);
  const line = [escapeCommand(found), ...(spec.args ?? []).map((arg) => escapeArgument(arg, twice))].join(" ");
  return { file: comSpec, args: ["/d", "/s", "/c", `"${line}"`], windowsVerbatimArguments: true };
}

/** `command` on PATH with one of PATHEXT's extensions (it may already name one, or a path). */
function findOnWindowsPath(command: string, env: NodeJS.ProcessEnv): string | undefined {
  const extensions = (env.PATHEXT ?? ".COM;.EXE;.BAT;.CMD").split(";").filter(Boolean);
  const candidates = extname(command) !== "" ? ["", ...extensions] : extensions;
  // A path is taken as it is; a bare name only from PATH (Windows' own search also tries the cwd: not here).
  const dirs = /[\\/]/.test(command) ? [""] : (env.PATH ?? env.Path ?? "").split(";").filter(Boolean);
  for (const dir of dirs) {
    for (const extension of candidates) {
      const path = dir === "" ? `${command}${extension}` : join(dir, `${command}${extension}`);
      if (existsSync(path)) return path;
    }
  }
  return undefined;
}

const META = /([()\][%!^"`<>&|;, *?])/g;

function escapeCommand(command: string): string {
  return command.replace(META, "^$1");
}

/** One argument quoted for CommandLineToArgvW, then cmd.exe's metacharacters escaped. */
function escapeArgument(arg: string, twice: boolean): string {
  let quoted = arg.replace(/(\\*)"/g, '$1$1\\"').replace(/(\\*)$/, "$1$1");
  quoted = `"${quoted}"`.replace(META, "^$1");
  return twice ? quoted.replace(META, "^$1") : quoted;
}
