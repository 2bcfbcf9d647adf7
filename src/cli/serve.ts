export async function runServe(_argv: string[]): Promise<number> {
  process.stderr.write("agentkit-acp serve: not built yet\n");
  return 2;
}
