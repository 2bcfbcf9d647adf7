import { registerAfterEachHooks } from "./after-each.js";

// Runs before every test file (both projects): the helpers' cleanups after each test.
registerAfterEachHooks();
