import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const example = new URL("../../examples/service/nginx.conf", import.meta.url).pathname;

export type TestNginx = { url: string; base: string; stop(): Promise<void>; reason?: undefined } | { url?: undefined; reason: string };

/** A free TCP port on 127.0.0.1 (closed again before nginx takes it). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function nginxBinary(): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(":").concat(["/usr/sbin", "/usr/local/sbin"])) {
    if (dir && existsSync(join(dir, "nginx"))) return join(dir, "nginx");
  }
  return undefined;
}

/**
 * nginx with the service guide's config (examples/service/nginx.conf, shown in docs/service.md) in front of the given instance
 * ports, in a temp prefix on a free port. Without an nginx binary: the reason, so the caller
 * can address the instances itself.
 */
export async function startNginx(upstreamPorts: [number, number]): Promise<TestNginx> {
  const binary = nginxBinary();
  if (!binary) return { reason: "nginx is not installed (apt-get install nginx-light)" };
  const prefix = mkdtempSync(join(tmpdir(), "agentkit-nginx-"));
  chmodSync(prefix, 0o777); // workers may run as nobody and buffer request bodies here
  const port = await freePort();
  const config = readFileSync(example, "utf8")
    .replace("worker_processes 1;", `worker_processes 1;\npid ${prefix}/nginx.pid;\nerror_log ${prefix}/error.log warn;`)
    .replace(
      "http {",
      `http {\n    client_body_temp_path ${prefix}/body;\n    proxy_temp_path ${prefix}/proxy;\n    fastcgi_temp_path ${prefix}/fastcgi;\n    uwsgi_temp_path ${prefix}/uwsgi;\n    scgi_temp_path ${prefix}/scgi;`,
    )
    .replace("127.0.0.1:8081", `127.0.0.1:${upstreamPorts[0]}`)
    .replace("127.0.0.1:8082", `127.0.0.1:${upstreamPorts[1]}`)
    .replace("listen 127.0.0.1:8080;", `listen 127.0.0.1:${port};`);
  const file = join(prefix, "nginx.conf");
  writeFileSync(file, config);
  let stderr = "";
  const child: ChildProcess = spawn(binary, ["-p", prefix, "-c", file, "-g", "daemon off;"], { stdio: ["ignore", "ignore", "pipe"] });
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async (): Promise<void> => {
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
    rmSync(prefix, { recursive: true, force: true });
  };
  // Listening once a TCP connect succeeds (bounded); an early exit is a failure to report.
  const deadline = Date.now() + 15_000;
  let gone = false;
  void exited.then(() => (gone = true));
  while (!(await canConnect(port))) {
    if (gone || Date.now() > deadline) {
      await stop();
      return { reason: `nginx did not start: ${stderr || "no output"}` };
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const base = `http://127.0.0.1:${port}`;
  return { url: `${base}/acp`, base, stop };
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
