import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

// Tests spawn the compiled CLI (dist/); an incremental build keeps it in step with src/.
export default function setup(): void {
  const root = fileURLToPath(new URL("../..", import.meta.url));
  execFileSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"], {
    cwd: root,
    stdio: "inherit",
  });
}
