import { LocalCommandRunner, LocalFileOperations } from "../../src/tools/index.js";
import { operationsContract } from "./operations.contract.js";

operationsContract("local files and processes", async () => ({
  files: new LocalFileOperations(),
  commands: new LocalCommandRunner({ killGraceMs: 500 }),
  close: async () => {},
}));
