import { afterAll } from "vitest";
import { registerAfterEachHooks } from "./after-each.js";
import { removeFileTempDirs } from "./temp.js";

// Runs before every test file (both projects): the helpers' cleanups after each test, and the
// file's scratch directories after the file (registered first, so they run after its own hooks).
afterAll(removeFileTempDirs);
registerAfterEachHooks();
