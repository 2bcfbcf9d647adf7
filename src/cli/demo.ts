export async function runDemo(_argv: string[]): Promise<number> {
  process.stderr.write("agentkit-acp demo: not built yet\n");
  return 2;
}
