// @ts-check
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import globals from "globals";

/** Folders of src/ and what each may NOT import (dependencies point one way). */
const layers = {
  core: ["model", "tools", "loop", "store", "acp", "serve", "cli", "testing"],
  model: ["tools", "loop", "store", "acp", "serve", "cli", "testing"],
  tools: ["loop", "store", "acp", "serve", "cli", "testing"],
  loop: ["store", "acp", "serve", "cli", "testing"],
  // The store sits on core: the persisted transcript shape (LoopSnapshot) is a core type.
  store: ["model", "tools", "loop", "acp", "serve", "cli", "testing"],
  // Shape conversions v1 <-> v2 draft, shared by both bridges: wire types only.
  "acp/v2": ["model", "tools", "loop", "store", "acp/agent", "acp/client", "acp/delegation", "serve", "cli", "testing", "inspect"],
  // The protocol adapter: it knows no product (the reference agent is src/serve, above it).
  "acp/agent": ["acp/client", "acp/delegation", "serve", "cli", "testing"],
  "acp/client": ["acp/agent", "acp/delegation", "store", "serve", "cli", "testing"],
  "acp/delegation": ["acp/agent", "store", "serve", "cli", "testing"],
  // The reference agent `serve` runs (system prompt, tools, models, store choice, defaults).
  serve: ["acp/client", "acp/delegation", "cli", "testing", "inspect"],
  testing: ["cli"],
  inspect: ["cli", "acp/agent", "acp/delegation", "serve", "testing"],
};

const layerRules = Object.entries(layers).map(([folder, banned]) => ({
  files: [`src/${folder}/**/*.ts`],
  rules: {
    "no-restricted-imports": [
      "error",
      {
        patterns: [
          {
            group: banned.flatMap((b) => [`**/${b}/*`, `**/${b}`]),
            message: `src/${folder} may not import these folders (see docs/architecture.md).`,
          },
          ...(["core", "model", "tools", "loop", "store"].includes(folder)
            ? [{ group: ["@agentclientprotocol/sdk", "@agentclientprotocol/sdk/*"], message: "ACP wire types belong in src/acp only." }]
            : []),
        ],
      },
    ],
  },
}));

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "coverage/**", "bin/**", "docs/api/**", "test/fixtures/agents/.bundle/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { ...globals.node },
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: false }],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
    },
  },
  {
    files: ["src/**/*.ts"],
    rules: {
      "no-console": "error",
      "@typescript-eslint/no-explicit-any": "error",
      // Small enough to read whole: a longer function becomes steps or data, a longer file two homes.
      "max-lines-per-function": ["error", { max: 100 }],
      "max-lines": ["error", { max: 500 }],
    },
  },
  ...layerRules,
  // The inspect page runs in the browser and has its own tsconfig (DOM types).
  {
    files: ["src/inspect/page/**/*.ts"],
    languageOptions: { globals: { ...globals.browser }, parserOptions: { projectService: false, project: "src/inspect/page/tsconfig.json", tsconfigRootDir: import.meta.dirname } },
  },
  { files: ["eslint.config.js", "**/*.mjs"], ...tseslint.configs.disableTypeChecked },
);
