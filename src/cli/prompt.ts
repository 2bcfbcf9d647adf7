export async function runPrompt(_argv: string[]): Promise<number> {
  process.stderr.write("agentkit-acp prompt: not built yet\n");
  return 2;
}
